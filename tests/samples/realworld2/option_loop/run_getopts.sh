#!/bin/bash
BASE=meta-llama/Llama-2-7b-hf
while getopts "b:" flag; do
    case $flag in
        b) BASE=$OPTARG ;;
        *) exit 1 ;;
    esac
done
GPUS=${1:-2}

torchrun --nproc_per_node $GPUS sft.py --model_name_or_path "$BASE" --per_device_train_batch_size 2
