#!/bin/bash
BATCH=2
python finetune.py --per_device_train_batch_size $BATCH
cat > summary.txt <<END
batch $BATCH
