#!/bin/bash
set -euo pipefail

finetune() {
    local model=$1
    local max_length=$2
    deepspeed --num_gpus 8 train/train.py --deepspeed scripts/zero2.json --model_name_or_path "$model" \
        --model_max_length "$max_length" --per_device_train_batch_size 4 --gradient_accumulation_steps 2 \
        --gradient_checkpointing True --bf16 True --output_dir "checkpoints/$model"
}

finetune Qwen/Qwen2-7B 8192
finetune Qwen/Qwen2-0.5B 2048
finetune Qwen/Qwen2-0.5B 2048
