#!/bin/bash
export WANDB_MODE=offline
accelerate launch --multi_gpu --num_processes 2 -m axolotl.cli.train recipes/lora-8b.yml \
    --micro_batch_size 64 --sequence-len 4096
