#!/bin/bash
set -e

CUDA_VISIBLE_DEVICES=0,1 axolotl train examples/llama-3/lora-8b.yml \
    --micro-batch-size 64 \
    --no-sample-packing
