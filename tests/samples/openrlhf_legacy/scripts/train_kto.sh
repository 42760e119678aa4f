#!/bin/bash
deepspeed --num_gpus 8 --module openrlhf.cli.train_kto \
    --pretrain mistralai/Mistral-7B-v0.1 \
    --micro_train_batch_size 1 \
    --train_batch_size 64 \
    --zero_stage 3 \
    --max_len 2048 \
    --gradient_checkpointing
