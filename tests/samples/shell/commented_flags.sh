#!/bin/bash
# Each flag carries its note as a command substitution of a comment, which bash expands to nothing.
python qlora.py --dataset="my-instructions" \
    --dataset_format="alpaca" `# the same layout as our data` \
    --learning_rate 0.0001 `# the paper's appendix `\
    --per_device_train_batch_size 1 `# fits one 24GB card `\
    --model_name_or_path "huggyllama/llama-7b" \
    --source_max_len 512  `# longer than most samples  `\
    --output_dir out `# where checkpoints go`
