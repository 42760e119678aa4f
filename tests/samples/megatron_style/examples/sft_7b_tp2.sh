#!/bin/bash
# Qwen2-7B supervised fine-tuning on one node of eight GPUs, Megatron style.
TP="${1:-2}"
PP="${2:-1}"
SEQ_LEN="${3:-4096}"
MBS="${4:-2}"

torchrun --nproc_per_node 8 train/pretrain.py \
    --model-name Qwen/Qwen2-7B \
    --seq-length ${SEQ_LEN} \
    --micro-batch-size ${MBS} \
    --global-batch-size 128 \
    --tensor-model-parallel-size ${TP} \
    --pipeline-model-parallel-size ${PP} \
    --use-distributed-optimizer \
    --bf16
