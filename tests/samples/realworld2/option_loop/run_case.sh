#!/bin/bash
# Run as `bash run_case.sh [--base PATH] [--micro N]`; without options the values below are used.
BASE="meta-llama/Llama-2-7b-hf"
MICRO=4

print_help() {
    echo "usage: run_case.sh [--base PATH] [--micro N]"
}

while [[ $# -gt 0 ]]; do
    case "$1" in
        --base)
            shift
            BASE="$1"
            ;;
        --micro)
            MICRO=$2
            shift
            ;;
        -h|--help)
            print_help
            exit 0
            ;;
        *)
            echo "unknown option $1"
            exit 1
            ;;
    esac
    shift
done

torchrun --nproc_per_node 4 sft.py \
    --model_name_or_path $BASE \
    --per_device_train_batch_size $MICRO \
    --gradient_accumulation_steps 2 \
    --bf16 True
