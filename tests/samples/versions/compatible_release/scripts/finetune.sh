#!/bin/bash
# Full fine-tune of Llama-2-7B on 4 GPUs, ZeRO-3.
MODEL=${MODEL:-meta-llama/Llama-2-7b-hf}

torchrun --nproc_per_node 4 --master_port 29501 train.py \
    --model_name_or_path $MODEL \
    --data_path data/alpaca.json \
    --bf16 True \
    --output_dir checkpoints/llama2-7b-sft \
    --num_train_epochs 3 \
    --per_device_train_batch_size 4 \
    --gradient_accumulation_steps 8 \
    --model_max_length 2048 \
    --gradient_checkpointing True \
    --deepspeed scripts/zero3.json \
    --learning_rate 2e-5 \
    --save_strategy steps \
    --save_steps 500
