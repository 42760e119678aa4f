#!/bin/bash
#SBATCH --job-name=vlm-sft
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --gres=gpu:8

export PER_NODE=8
export LR=1e-5
WORKERS=16
CACHE_DIR=/scratch/cache

srun --kill-on-bad-exit=1 bash -c 'torchrun --nnodes $SLURM_NNODES --nproc_per_node $PER_NODE \
    --node_rank $SLURM_NODEID train/sft.py \
    --learning_rate ${LR} \
    --dataloader_num_workers $WORKERS \
    --per_device_train_batch_size 4'
