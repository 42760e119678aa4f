#!/bin/bash
deepspeed --num_gpus 4 vlm/train/train.py \
    --data_path pairs.json \
    --bf16 True \
    --per_device_train_batch_size 4 \
    --per_device_eval_batch_size 16 \
    --gradient_accumulation_steps 4 \
    --evaluation_strategy "steps" \
    --logging_steps 1 \
    --output_dir out
