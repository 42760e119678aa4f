#!/bin/bash
# A cluster recipe: 32 GPUs as 4 nodes of 8, every count derived from GPUS.
set -x
PARTITION=${PARTITION:-"gpu"}
GPUS=${GPUS:-32}
GPUS_PER_NODE=${GPUS_PER_NODE:-8}
NODES=$((GPUS / GPUS_PER_NODE))
BATCH_SIZE=${BATCH_SIZE:-128}
PER_DEVICE_BATCH_SIZE=${PER_DEVICE_BATCH_SIZE:-4}
GRADIENT_ACC=$((BATCH_SIZE / PER_DEVICE_BATCH_SIZE / GPUS))

srun -p ${PARTITION} \
  --gres=gpu:${GPUS_PER_NODE} \
  --nodes=${NODES} \
  --ntasks=${GPUS} \
  --ntasks-per-node=${GPUS_PER_NODE} \
  --kill-on-bad-exit=1 \
  python -u train.py \
  --model_name_or_path lmsys/vicuna-7b-v1.5 \
  --output_dir work_dirs/sft \
  --bf16 True \
  --per_device_train_batch_size ${PER_DEVICE_BATCH_SIZE} \
  --gradient_accumulation_steps ${GRADIENT_ACC} \
  --model_max_length 2048 \
  --gradient_checkpointing True \
  --deepspeed zero3.json \
  2>&1 | tee -a "train.log"
