#!/bin/bash
# Visual instruction tuning of a 13B LLaVA-1.5 model, full fine-tune (written for 8 x A100 80GB).

deepspeed llava/train/train_mem.py \
    --deepspeed ./scripts/zero3.json \
    --model_name_or_path lmsys/vicuna-13b-v1.5 \
    --version v1 \
    --data_path ./data/mix665k.json \
    --image_folder ./data \
    --vision_tower openai/clip-vit-large-patch14-336 \
    --mm_projector_type mlp2x_gelu \
    --image_aspect_ratio pad \
    --group_by_modality_length True \
    --bf16 True \
    --output_dir ./checkpoints/llava-13b \
    --num_train_epochs 1 \
    --per_device_train_batch_size 16 \
    --per_device_eval_batch_size 4 \
    --gradient_accumulation_steps 1 \
    --evaluation_strategy "no" \
    --learning_rate 2e-5 \
    --model_max_length 2048 \
    --gradient_checkpointing True \
    --lazy_preprocess True
