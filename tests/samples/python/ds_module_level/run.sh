#!/bin/bash
python -m torch.distributed.launch --nproc_per_node=1 train.py \
  --deepspeed_config ds_config.json \
  --deepspeed --epochs 10
