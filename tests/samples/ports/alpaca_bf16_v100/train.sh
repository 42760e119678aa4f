#!/bin/bash
# Alpaca-style instruction tuning of LLaMA-2-7B with FSDP, tuned on A100s (bf16).
torchrun --nproc_per_node=4 --master_port=29501 train.py \
    --model_name_or_path meta-llama/Llama-2-7b-hf \
    --data_path ./alpaca_data.json \
    --bf16 True \
    --output_dir ./out/alpaca-7b \
    --num_train_epochs 3 \
    --per_device_train_batch_size 4 \
    --per_device_eval_batch_size 4 \
    --gradient_accumulation_steps 8 \
    --evaluation_strategy "no" \
    --learning_rate 2e-5 \
    --fsdp "full_shard auto_wrap" \
    --fsdp_transformer_layer_cls_to_wrap 'LlamaDecoderLayer' \
    --tf32 True \
    --model_max_length 512
