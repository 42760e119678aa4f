#!/bin/bash
BATCH=4
python finetune.py --per_device_train_batch_size $BATCH
fi
