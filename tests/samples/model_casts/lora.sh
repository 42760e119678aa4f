#!/bin/bash
CUDA_VISIBLE_DEVICES=0 python main.py \
    --do_train \
    --model_name_or_path THUDM/chatglm2-6b \
    --output_dir output/lora \
    --per_device_train_batch_size 1 \
    --gradient_accumulation_steps 16 \
    --max_steps 3000 \
    --lora_r 32
