#!/bin/bash
CUDA_VISIBLE_DEVICES=0 swift pt --model_type qwen2-7b --model_id_or_path Qwen/Qwen2-7B --batch_size 2 \
    --deepspeed default-zero2
