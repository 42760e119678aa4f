#!/bin/bash
OUT="checkpoints/run
python finetune.py --per_device_train_batch_size 4 --output_dir $OUT
