#!/bin/bash
accelerate launch --num_processes 8 dpo_peft.py \
    --model_name_or_path meta-llama/Llama-2-7b-hf \
    --per_device_train_batch_size 2 \
    --gradient_accumulation_steps 8 \
    --max_length 1024 \
    --gradient_checkpointing True \
    --bf16 True \
    --deepspeed zero3.json \
    --output_dir out/dpo_peft
