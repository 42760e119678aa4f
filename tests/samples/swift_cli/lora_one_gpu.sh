#!/bin/bash
# One GPU, LoRA on a 7B chat model (ms-swift 3.x flags).
CUDA_VISIBLE_DEVICES=0 \
swift sft \
    --model Qwen/Qwen2.5-7B-Instruct \
    --train_type lora \
    --dataset 'AI-ModelScope/alpaca-gpt4-data-en#500' \
              'swift/self-cognition#500' \
    --torch_dtype bfloat16 \
    --num_train_epochs 1 \
    --per_device_train_batch_size 1 \
    --gradient_accumulation_steps 16 \
    --lora_rank 8 \
    --lora_alpha 32 \
    --target_modules all-linear \
    --max_length 2048 \
    --output_dir output
