#!/bin/bash
<<notes
Run on one node with four GPUs.
(the batch below fits in 40 GB)
notes
BATCH=2
accelerate launch finetune.py --per_device_train_batch_size $BATCH
