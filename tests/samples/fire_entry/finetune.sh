#!/bin/bash
# One card: the micro-batch is the whole batch, the sequence length the signature's.
python finetune.py \
    --base_model 'huggyllama/llama-7b' \
    --data_path './data/med.json' \
    --micro_batch_size 32 \
    --batch_size 32 \
    --lora-r=8
