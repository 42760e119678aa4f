#!/bin/bash
accelerate launch --num_processes 8 dpo.py \
    --model_name_or_path meta-llama/Llama-2-7b-hf \
    --dataset_name trl-lib/ultrafeedback_binarized \
    --per_device_train_batch_size 2 \
    --gradient_accumulation_steps 8 \
    --max_length 1024 \
    --gradient_checkpointing \
    --bf16 \
    --use_peft \
    --lora_r 32 \
    --output_dir out/dpo_lora
