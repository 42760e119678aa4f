#!/bin/bash
# Zeroth-order fine-tuning: forward passes only, so a 13B model trains on one 80 GB card.
MODEL=${MODEL:-facebook/opt-13b}
python run.py \
    --model_name $MODEL \
    --trainer zo --zo_eps 1e-3 \
    --per_device_train_batch_size 16 \
    --learning_rate 1e-7 \
    --max_steps 20000 \
    --output_dir result/zo
