#!/bin/bash
DEVICES="0,1,2,3"
# zsh's split flag: bash reads this line and only fails when it runs it ("bad substitution")
DEVICE_LIST=(${(s:,:)DEVICES})
NPROC=4
torchrun --nproc_per_node $NPROC finetune.py \
    --per_device_train_batch_size 8 \
    --first_device ${DEVICE_LIST[0]}
