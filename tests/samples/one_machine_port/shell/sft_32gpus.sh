#!/bin/bash
# Instruction tuning on four nodes of eight GPUs, started by slurm.
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
  --deepspeed zero2.json \
  --model_name_or_path lmsys/vicuna-7b-v1.5 \
  --bf16 True \
  --per_device_train_batch_size ${PER_DEVICE_BATCH_SIZE} \
  --gradient_accumulation_steps ${GRADIENT_ACC} \
  --gradient_checkpointing True \
  --model_max_length 2048 \
  --output_dir ./checkpoints/sft
