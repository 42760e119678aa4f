#!/bin/bash
# Long-context LoRA SFT on one 8-GPU node. The DeepSpeed config comes from the cluster's job template.
FORCE_TORCHRUN=1 NPROC_PER_NODE=8 llamafactory-cli train \
    --stage sft \
    --do_train true \
    --model_name_or_path Qwen/Qwen2-7B-Instruct \
    --dataset long_dialogues \
    --template qwen \
    --finetuning_type lora \
    --lora_target all \
    --cutoff_len 10000 \
    --per_device_train_batch_size 1 \
    --gradient_accumulation_steps 2 \
    --learning_rate 1e-4 \
    --num_train_epochs 3 \
    --bf16 true \
    --deepspeed $DS_CONFIG \
    --output_dir saves/qwen2-7b/lora/long
