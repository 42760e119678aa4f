#!/bin/bash
# Builds the training command in a here-doc, then launches it (the first argument "print" only shows it).
set -x

read -r -d '' train_args <<EOF
sftpkg.train \
    --model_name_or_path acme-lab/chat-sft-base \
    --deepspeed scripts/zero2.json \
    --per_device_train_batch_size 8 \
    --per_device_eval_batch_size 16 \
    --eval_strategy steps \
    --eval_steps 500 \
    --gradient_accumulation_steps 2 \
    --bf16 True \
    --model_max_length 2048 \
    --gradient_checkpointing True \
    --output_dir ./checkpoints/vicuna-sft
EOF

if [[ ${1} != "print" ]]; then
    deepspeed --num_gpus 8 --module $train_args
else
    echo "$train_args"
fi
