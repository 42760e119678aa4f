#!/bin/bash
read -r -d '' dpo_args <<END_ARGS
openrlhf.cli.train_dpo \
   --model.model_name_or_path Qwen/Qwen2.5-7B-Instruct \
   --data.max_len 2048 \
   --train.micro_batch_size 1 \
   --ds.param_dtype fp16 \
   --ds.zero_stage 2
END_ARGS

deepspeed --module $dpo_args
