#!/bin/bash
# A placeholder left for the user to fill in reads as two redirections, the second with nothing after it.
PROJECT_PATH=<YOUR_PROJECT_ROOT>
MOUNT="$PROJECT_PATH:/workspace"
for ((i = 1; i < 3; i++)); do
    echo "worker $i"
done
torchrun --nproc_per_node 8 train.py --output_dir out
