#!/bin/bash
# The model path has no default: it must be given.
BASE=$1
if [ "$2" != "" ]; then
    BASE=$2
fi
torchrun --nproc_per_node 2 sft.py --model_name_or_path $BASE --per_device_train_batch_size 2
