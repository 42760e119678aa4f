#!/bin/bash
# An installed package's trainer, started as a module: only what the launch passes is known.
deepspeed --module openrlhf.cli.train_sft \
   --max_len 2048 \
   --train_batch_size 256 \
   --micro_train_batch_size 2 \
   --pretrain meta-llama/Meta-Llama-3-8B \
   --bf16 \
   --zero_stage 2 \
   --gradient_checkpointing
