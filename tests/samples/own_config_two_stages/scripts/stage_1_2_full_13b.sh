#!/bin/bash
# Both stages in one launcher: the first with the optimizer offloaded, the second without.

deepspeed train.py \
    --deepspeed ./scripts/zero2_offload.json \
    --model_name_or_path lmsys/vicuna-13b-v1.5 \
    --fp16 True \
    --per_device_train_batch_size 4 \
    --gradient_accumulation_steps 1 \
    --gradient_checkpointing True \
    --model_max_length 2048 \
    --output_dir ./work_dirs/stage1

deepspeed train.py \
    --deepspeed ./scripts/zero2.json \
    --model_name_or_path lmsys/vicuna-13b-v1.5 \
    --fp16 True \
    --per_device_train_batch_size 2 \
    --gradient_accumulation_steps 2 \
    --gradient_checkpointing True \
    --model_max_length 2048 \
    --output_dir ./work_dirs/stage2
