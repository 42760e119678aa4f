#!/bin/bash
# The same model fine-tuned with backpropagation and Adam.
MODEL=${MODEL:-facebook/opt-13b}
python run.py \
    --model_name $MODEL \
    --trainer regular \
    --per_device_train_batch_size 16 \
    --learning_rate 1e-5 \
    --num_train_epochs 5 \
    --output_dir result/ft
