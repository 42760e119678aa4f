#!/bin/bash
MODEL=Qwen/Qwen2-7B
MAX_LENGTH=8192
MICRO_BATCH=16

bash scripts/finetune.sh "$MODEL" "$MAX_LENGTH" "$MICRO_BATCH"
