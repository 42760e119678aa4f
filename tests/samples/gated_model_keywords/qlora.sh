#!/bin/bash
# QLoRA: a 4-bit base with adapters on one card.
python finetune.py \
    --model_name_or_path meta-llama/Llama-2-7b-hf \
    --use_lora True \
    --use_qlora True \
    --per_device_train_batch_size 4 \
    --gradient_accumulation_steps 4 \
    --output_dir out/qlora
