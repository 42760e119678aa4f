#!/bin/bash
NGPU=$(nvidia-smi --list-gpus | wc -l
python finetune.py --per_device_train_batch_size 4
