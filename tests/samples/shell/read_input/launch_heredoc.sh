#!/bin/bash
# The command is written in a here-doc, read into a variable, and launched unquoted.
NODES=1
read -r -d '' train_cmd <<EOF
mypkg.cli.train \
    --train.micro_batch_size 4 \
    --data.name "my data" \
    --nodes ${NODES} \
    --steps $((100*2))
EOF

if [[ ${1} != "dry" ]]; then
    deepspeed --module $train_cmd
fi
