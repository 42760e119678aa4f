#!/bin/bash
deepspeed train.py \
    --deepspeed ./scripts/zero2.json \
    --model_name_or_path lmsys/vicuna-13b-v1.5 \
    --bf16 True \
    --per_device_train_batch_size 4 \
    --gradient_accumulation_steps 4 \
    --gradient_checkpointing True \
    --model_max_length 2048 \
    --output_dir ./checkpoints/vicuna-13b
