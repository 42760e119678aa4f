#!/bin/bash
deepspeed --include localhost:0 finetune.py \
    --model_name_or_path meta-llama/Llama-2-7b-hf \
    --output_dir output/lora \
    --per_device_train_batch_size 16 \
    --model_max_length 2048 \
    --bf16 --use_lora \
    --gradient_accumulation_steps 1
