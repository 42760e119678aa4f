#!/bin/bash
# ZeRO-2 run that evaluates on the held-out split during training.
deepspeed --num_gpus 2 train.py \
    --deepspeed scripts/zero2.json \
    --model_name_or_path stabilityai/stablelm-2-1_6b \
    --per_device_train_batch_size 4 \
    --per_device_eval_batch_size 32 \
    --eval_strategy steps \
    --eval_steps 5000 \
    --model_max_length 512 \
    --bf16 True \
    --output_dir checkpoints/eval
