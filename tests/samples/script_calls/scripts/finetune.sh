#!/bin/bash
# Shared by the per-model wrappers: bash scripts/finetune.sh MODEL MAX_LENGTH [MICRO_BATCH]
if [ $# -lt 2 ]; then
    echo "Usage: $0 <MODEL> <MAX_LENGTH> [MICRO_BATCH]"
    exit 1
fi

MODEL="$1"
MAX_LENGTH="$2"
MICRO_BATCH="${3:-4}"

deepspeed --num_gpus 8 train/train.py \
    --deepspeed scripts/zero2.json \
    --model_name_or_path $MODEL \
    --model_max_length $MAX_LENGTH \
    --per_device_train_batch_size $MICRO_BATCH \
    --gradient_accumulation_steps 2 \
    --gradient_checkpointing True \
    --bf16 True \
    --output_dir checkpoints/$(basename $MODEL)
