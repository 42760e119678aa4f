#!/bin/bash
python submit.py \
    --image trainer:rm \
    --gpus 8 \
    --num_nodes 4 \
    --preemptable \
    -- accelerate launch \
    --num_machines 4 \
    --num_processes 8 \
    train_rm.py \
    --model_name_or_path org/base-7b \
    --learning_rate 3e-6 \
    --per_device_train_batch_size 1 \
    --gradient_accumulation_steps 8 \
    --gradient_checkpointing
