#!/bin/bash
deepspeed vlm/train/train_mem.py \
    --deepspeed zero3.json \
    --model_name_or_path lmsys/vicuna-7b-v1.5 \
    --bf16 True \
    --output_dir ./checkpoints/vicuna \
    --per_device_train_batch_size 16 \
    --gradient_accumulation_steps 1 \
    --model_max_length 2048 \
    --gradient_checkpointing True
