#!/bin/bash
# python-fire hands the words with no flag to the parameters in order: base_model, then data_path, then
# output_dir (--micro_batch_size is named, so the fourth word goes to batch_size, the fifth to num_epochs).
python finetune.py huggyllama/llama-7b ./data/med.json ./out --micro_batch_size 4 128 3
