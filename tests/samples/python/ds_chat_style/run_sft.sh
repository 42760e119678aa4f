#!/bin/bash
STAGE=$1
if [ "$STAGE" == "" ]; then
    STAGE=3
fi
deepspeed sft.py \
   --model_name_or_path meta-llama/Llama-2-7b-hf \
   --per_device_train_batch_size 4 \
   --gradient_accumulation_steps 2 \
   --max_seq_len 1024 \
   --gradient_checkpointing \
   --zero_stage $STAGE \
   --offload \
   --dtype bf16 \
   --lora_dim 64 \
   --deepspeed \
   --output_dir ./out
