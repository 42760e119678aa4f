#!/bin/bash
# Same recipe with half the micro-batch, for the longer context runs.
deepspeed --num_gpus 4 train.py \
    --deepspeed scripts/zero3.json \
    --model_name_or_path stabilityai/stablelm-2-1_6b \
    --per_device_train_batch_size 2 \
    --gradient_accumulation_steps 8 \
    --model_max_length 1024 \
    --bf16 True \
    --output_dir checkpoints/long
