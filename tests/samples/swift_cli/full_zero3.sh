#!/bin/bash
NPROC_PER_NODE=4 \
CUDA_VISIBLE_DEVICES=0,1,2,3 \
swift sft \
    --model Qwen/Qwen2.5-7B \
    --tuner_type full \
    --dataset my_data.jsonl \
    --torch_dtype bfloat16 \
    --per_device_train_batch_size 2 \
    --gradient_accumulation_steps 4 \
    --packing true \
    --attn_impl flash_attn \
    --max_length 8192 \
    --deepspeed zero3_offload
