#!/bin/bash
# Full fine-tune on one 4-GPU node with ZeRO-3.
deepspeed --num_gpus 4 train.py \
    --deepspeed scripts/zero3.json \
    --model_name_or_path stabilityai/stablelm-2-1_6b \
    --per_device_train_batch_size 4 \
    --gradient_accumulation_steps 4 \
    --model_max_length 512 \
    --bf16 True \
    --output_dir checkpoints/full
