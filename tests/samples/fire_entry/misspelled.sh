#!/bin/bash
python finetune.py --base_model huggyllama/llama-7b --micro_batch_size 4 --cutoff_length 2048 --nogroup_by_length
