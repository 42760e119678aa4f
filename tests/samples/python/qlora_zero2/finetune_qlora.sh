#!/bin/bash
deepspeed train.py \
    --deepspeed ./zero2.json \
    --lora_enable True \
    --bits 4 \
    --model_name_or_path lmsys/vicuna-13b-v1.5 \
    --bf16 True \
    --output_dir ./checkpoints/qlora \
    --per_device_train_batch_size 16 \
    --gradient_accumulation_steps 1 \
    --model_max_length 2048 \
    --gradient_checkpointing True
