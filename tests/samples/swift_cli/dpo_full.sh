#!/bin/bash
NPROC_PER_NODE=4 \
CUDA_VISIBLE_DEVICES=0,1,2,3 \
swift rlhf \
    --rlhf_type dpo \
    --model Qwen/Qwen2.5-7B-Instruct \
    --tuner_type full \
    --per_device_train_batch_size 4 \
    --gradient_accumulation_steps 4 \
    --max_length 8192 \
    --deepspeed zero3
