#!/bin/bash
# Two machines of eight GPUs; each runs this script with its own NODE_RANK.
NNODES=2
torchrun --nnodes ${NNODES} --nproc_per_node 8 --node_rank ${NODE_RANK} \
  --master_addr ${MASTER_ADDR} --master_port 29500 \
  train.py \
  --deepspeed zero3.json \
  --model_name_or_path lmsys/vicuna-7b-v1.5 \
  --bf16 True \
  --per_device_train_batch_size 4 \
  --gradient_accumulation_steps 2 \
  --gradient_checkpointing True \
  --model_max_length 2048 \
  --output_dir ./checkpoints/sft_torchrun
