#!/bin/bash
# Full fine-tune: neither adapters nor a quantized base.
torchrun --nproc_per_node 8 finetune.py \
    --model_name_or_path meta-llama/Llama-2-7b-hf \
    --per_device_train_batch_size 4 \
    --gradient_accumulation_steps 4 \
    --output_dir out/full
