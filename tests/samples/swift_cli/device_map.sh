#!/bin/bash
CUDA_VISIBLE_DEVICES=0,1 \
swift sft \
    --model Qwen/Qwen2.5-72B-Instruct \
    --tuner_type lora \
    --torch_dtype bfloat16 \
    --max_length 4096
