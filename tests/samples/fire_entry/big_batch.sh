#!/bin/bash
# The whole batch in one step, every row cut at 256 tokens.
python finetune.py --base_model huggyllama/llama-7b --micro_batch_size 128 --batch_size 128 --cutoff_len 256 \
    --lora_r 8
