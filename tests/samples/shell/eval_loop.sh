#!/bin/bash
# Sharded evaluation: one background process per visible GPU.
devices="${CUDA_VISIBLE_DEVICES:-0,1}"
IFS=',' read -ra DEVS <<< "$devices"
SHARDS=${#DEVS[@]}
EXTRA=(--temperature 0 --max_new_tokens 64)

for SHARD in $(seq 0 $((SHARDS-1))); do
    CUDA_VISIBLE_DEVICES=${DEVS[$SHARD]} python -m vlm.eval.answer \
        --shard $SHARD --num-shards $SHARDS "${EXTRA[@]}" &
done
wait

cat out/*.jsonl > out/all.jsonl
python tools/score.py --pred out/all.jsonl
