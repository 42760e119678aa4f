#!/bin/bash
# Phi-2 + CLIP-L/336 instruction tuning (second stage).
JSON_DIR="annotations"
IMG_DIR="images"
cd ~/moe-llava-checkout
HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 deepspeed moellava/train/train_mem.py \
    --deepspeed ./scripts/zero2.json \
    --model_name_or_path microsoft/phi-2 \
    --version phi \
    --data_path ${JSON_DIR}/tune_a.json \
                ${JSON_DIR}/tune_b.json ${JSON_DIR}/tune_c.json \
    --image_folder ${IMG_DIR} \
    --image_tower openai/clip-vit-large-patch14-336 \
    --image_aspect_ratio pad \
    --bf16 True \
    --output_dir ./checkpoints/phi2-finetune \
    --num_train_epochs 1 \
    --per_device_train_batch_size 8 \
    --per_device_eval_batch_size 4 \
    --gradient_accumulation_steps 2 \
    --evaluation_strategy "no" \
    --save_strategy "steps" \
    --save_steps 50000 \
    --learning_rate 2e-5 \
    --logging_steps 1 \
    --tf32 True \
    --model_max_length 2048 \
    --gradient_checkpointing True \
    --lazy_preprocess True \
    --report_to tensorboard
