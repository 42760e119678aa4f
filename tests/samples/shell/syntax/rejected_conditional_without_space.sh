#!/bin/bash
MODEL=$1
if [[ "$MODEL" == *"7b"*]]; then
    BATCH=4
fi
python finetune.py --per_device_train_batch_size $BATCH
