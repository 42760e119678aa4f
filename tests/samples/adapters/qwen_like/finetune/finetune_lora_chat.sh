#!/bin/bash
# LoRA on one node of 8 GPUs, ZeRO-2.
GPUS_PER_NODE=8
MODEL="Qwen/Qwen-7B-Chat"
DATA="path_to_data"

torchrun --nproc_per_node $GPUS_PER_NODE --master_port 6001 finetune.py \
    --model_name_or_path $MODEL \
    --data_path $DATA \
    --bf16 True \
    --output_dir output_qwen \
    --num_train_epochs 5 \
    --per_device_train_batch_size 2 \
    --gradient_accumulation_steps 8 \
    --learning_rate 3e-4 \
    --model_max_length 512 \
    --gradient_checkpointing True \
    --use_lora True \
    --lora_r 16 \
    --deepspeed finetune/ds_config_zero2.json
