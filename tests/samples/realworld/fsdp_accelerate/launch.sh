#!/bin/bash
CUDA_VISIBLE_DEVICES=0,1,2,3 accelerate launch \
    --config_file configs/sharded.yaml \
    entry.py qlora.yaml
