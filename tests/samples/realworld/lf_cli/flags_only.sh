#!/bin/bash
BASE=Qwen/Qwen2.5-7B-Instruct

CUDA_VISIBLE_DEVICES=0,1 llamafactory-cli train \
    --model_name_or_path ${BASE} \
    --trust_remote_code \
    --stage sft \
    --do_train \
    --finetuning_type lora \
    --lora_rank 8 \
    --cutoff_len 4096 \
    --per_device_train_batch_size 2 \
    --gradient_accumulation_steps 8 \
    --plot_loss \
    --bf16
