#!/bin/bash
CUDA_VISIBLE_DEVICES=0,1 deepspeed --include localhost:0,1 pkg/finetune.py \
    --deepspeed cfg/zero2.json \
    --per_device_train_batch_size 2 \
    --logging_dir logs \ # switch to wandb later
    --gradient_checkpointing True \
    --bf16 True
