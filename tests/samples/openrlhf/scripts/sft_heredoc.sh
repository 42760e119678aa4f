#!/bin/bash
set -x

read -r -d '' sft_args <<END_ARGS
openrlhf.cli.train_sft \
   --model.model_name_or_path Qwen/Qwen2.5-7B \
   --data.dataset my-org/chat-mix \
   --data.max_len 4096 \
   --train.micro_batch_size 2 \
   --train.batch_size 128 \
   --ds.adam_offload \
   --model.gradient_checkpointing_enable
END_ARGS

deepspeed --num_gpus 4 --module $sft_args
