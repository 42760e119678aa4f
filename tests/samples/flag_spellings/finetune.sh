#!/bin/bash
# argparse takes a unique prefix of a long option: `--per_device_train` is per_device_train_batch_size
torchrun --nproc_per_node 8 train.py \
    --model_name_or_path lmsys/vicuna-7b-v1.5 \
    --deepspeed zero3.json \
    --bf16 True \
    --per_device_train 64 \
    --gradient_accumulation 2 \
    --model_max 1024 \
    --gradient_checkpointing True
