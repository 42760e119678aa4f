#!/bin/bash
# MiniCPM-V 2.6 vision fine-tune on one node of eight GPUs.
MODEL="openbmb/MiniCPM-V-2_6"
MODEL_MAX_LENGTH=2048

deepspeed --include localhost:0-7 finetune.py \
    --model_name_or_path $MODEL \
    --llm_type qwen \
    --data_path data/train.json \
    --bf16 true \
    --tune_vision true \
    --tune_llm false \
    --model_max_length $MODEL_MAX_LENGTH \
    --max_slice_nums 9 \
    --max_steps 10000 \
    --output_dir output/minicpmv26 \
    --per_device_train_batch_size 2 \
    --per_device_eval_batch_size 1 \
    --gradient_accumulation_steps 1 \
    --learning_rate 1e-6 \
    --gradient_checkpointing true \
    --deepspeed finetune/ds_config_zero2.json
