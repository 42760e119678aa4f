#!/bin/bash
# One node of 8 GPUs under slurm.
srun --nodes=1 --ntasks=8 --kill-on-bad-exit=1 \
  python -u train.py \
  --model_name_or_path lmsys/vicuna-7b-v1.5 \
  --output_dir work_dirs/sft \
  --bf16 True \
  --per_device_train_batch_size 4 \
  --gradient_accumulation_steps 4 \
  --model_max_length 2048 \
  --gradient_checkpointing True \
  --deepspeed zero3.json
