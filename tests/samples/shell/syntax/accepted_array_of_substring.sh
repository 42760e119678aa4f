#!/bin/bash
ALL=(0 1 2 3 4 5 6 7)
FIRST=2
COUNT=4
PART=(${ALL[@]:$FIRST:$COUNT})
BATCH=16
deepspeed finetune.py --per_device_train_batch_size $BATCH --devices "${PART[*]}"
