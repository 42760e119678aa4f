#!/bin/bash
LEFT=a
RIGHT=b
if [ "$LEFT" \< "$RIGHT" ]; then
    BATCH=8
fi
python finetune.py --per_device_train_batch_size $BATCH
