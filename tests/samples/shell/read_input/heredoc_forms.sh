#!/bin/bash
# Values a launcher reads with `read` from here-docs and here-strings it writes itself.
MODEL=llama-7b
read -r -d '' ALL <<EOF
  --model $MODEL \
  --note "two words" 'single' ${SEED:-42} $((4*2)) \$MODEL \\ \x
  --last  
EOF
read -r FIRST <<EOF
  first line  
second line
EOF
read JOINED <<'EOF'
first \
second
third
EOF
read -r -d '' QUOTED <<"EOF"
--model $MODEL \
  --seed ${SEED:-1}
EOF
read -r -d '' TABS <<-EOF
	--a	1
		--b 2
	EOF
read -r -d '' TABS_JOINED <<-EOF
	--a \
		--b 2
	EOF
read -r ONE REST <<EOF
  one   two  three  four  
EOF
read -r P1 P2 P3 <<EOF
single
EOF
read -r <<EOF
  no name  
EOF
read -r HERE <<< "  here  $MODEL  "
IFS= read -r -d '' KEEP <<EOF
  kept  
EOF
read -r -d , COMMA <<EOF
a b,c
EOF
python train.py --all "$ALL" --first "$FIRST" --joined "$JOINED" --quoted "$QUOTED" --tabs "$TABS" --tabs-joined "$TABS_JOINED" \
    --one "$ONE" --rest "$REST" --p1 "$P1" --p2 "$P2" --p3 "$P3" --reply "$REPLY" --here "$HERE" --keep "$KEEP" --comma "$COMMA"
