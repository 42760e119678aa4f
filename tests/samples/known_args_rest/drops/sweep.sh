#!/bin/bash
for lr in 2e-5 1e-5; do
python submit_finetune.py \
    --config configs/sft_7b.yaml \
    --num_nodes 4 \
    --learning_rate $lr \
    --per_device_train_batch_size 2 \
    --gradient_accumulation_steps 2 \
    --model_name_or_path meta-llama/Llama-2-7b-hf
done
