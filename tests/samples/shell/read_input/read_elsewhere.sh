#!/bin/bash
read -r -d '' FROM_FILE < args.txt
echo "--a 1" | read -r FROM_PIPE
read -r FROM_TERMINAL
read -r -u 3 FROM_FD <<EOF
--a 1
EOF
read -r -n 3 COUNTED <<EOF
--a 1
EOF
read -r LINE <<EOF
--a $(cat extra.txt) --b 2
EOF
read -r -d '' WHOLE <<EOF
--a $(cat extra.txt) --b 2
EOF
python train.py --file "$FROM_FILE" --pipe "$FROM_PIPE" --terminal "$FROM_TERMINAL" --fd "$FROM_FD" \
    --counted "$COUNTED" --line "$LINE" --whole "$WHOLE"
