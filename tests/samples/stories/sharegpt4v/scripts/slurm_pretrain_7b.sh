#!/bin/bash
set -x

export GPUS_PER_NODE=8
export NNODES=2
export MASTER_PORT=29501
export LLM_PATH=lmsys/vicuna-7b-v1.5
VISION=openai/clip-vit-large-patch14-336
export VISION

SRUN_ARGS=${SRUN_ARGS:-""}
srun -p my_partition \
    --nodes=$NNODES \
    --ntasks-per-node=1 \
    --gres=gpu:$GPUS_PER_NODE \
    ${SRUN_ARGS} \
    bash -c 'torchrun --nnodes $NNODES --nproc_per_node $GPUS_PER_NODE --node_rank $SLURM_NODEID --master_port ${MASTER_PORT} share4v/train/train_mem.py \
    --model_name_or_path ${LLM_PATH} \
    --deepspeed ./scripts/zero3.json \
    --vision_tower ${VISION} \
    --image_aspect_ratio pad \
    --bf16 True \
    --num_train_epochs 1 \
    --per_device_train_batch_size 16 \
    --per_device_eval_batch_size 4 \
    --gradient_accumulation_steps 1 \
    --evaluation_strategy "no" \
    --learning_rate 2e-5 \
    --tf32 True \
    --model_max_length 2048 \
    --gradient_checkpointing True \
    --report_to wandb'
