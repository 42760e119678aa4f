#!/bin/bash
# LoRA on a 16-bit base
torchrun --nproc_per_node 1 train.py \
    --model_name_or_path meta-llama/Llama-2-13b-hf \
    --use_peft_lora True \
    --lora_r 16 \
    --bf16 True \
    --per_device_train_batch_size 1 \
    --gradient_accumulation_steps 16 \
    --gradient_checkpointing True \
    --max_seq_length 2048 \
    --output_dir out/qlora
