#!/bin/bash
# Second-stage fine-tune written for 2 GPUs. The accumulation is derived from the global batch, so a
# caller may override GPUS or PER_DEVICE_BATCH_SIZE and keep 16 samples per optimizer step.
set -x

GPUS=${GPUS:-2}
BATCH_SIZE=${BATCH_SIZE:-16}
PER_DEVICE_BATCH_SIZE=${PER_DEVICE_BATCH_SIZE:-4}
GRADIENT_ACC=$((BATCH_SIZE / PER_DEVICE_BATCH_SIZE / GPUS))

torchrun \
  --nnodes=1 \
  --node_rank=0 \
  --nproc_per_node=${GPUS} \
  --master_port=29511 \
  train.py \
  --model_name_or_path lmsys/vicuna-7b-v1.5 \
  --deepspeed zero1.json \
  --bf16 True \
  --output_dir out \
  --per_device_train_batch_size ${PER_DEVICE_BATCH_SIZE} \
  --gradient_accumulation_steps ${GRADIENT_ACC} \
  --model_max_length 4096 \
  --gradient_checkpointing True
