#!/bin/bash
# The same job with its node count written apart from its GPU count.
GPUS=${GPUS:-32}
NODES=4

srun --nodes=${NODES} --ntasks=${GPUS} --ntasks-per-node=8 \
  python -u train.py \
  --deepspeed zero3.json \
  --model_name_or_path lmsys/vicuna-7b-v1.5 \
  --bf16 True \
  --per_device_train_batch_size 4 \
  --gradient_accumulation_steps 1 \
  --gradient_checkpointing True \
  --model_max_length 2048 \
  --output_dir ./checkpoints/sft_fixed
