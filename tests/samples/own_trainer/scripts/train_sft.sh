#!/bin/bash
deepspeed --module pkg.train_sft \
    --pretrain meta-llama/Llama-2-7b-hf \
    --micro_train_batch_size 4 \
    --max_len 4096 \
    --max_epochs 1
