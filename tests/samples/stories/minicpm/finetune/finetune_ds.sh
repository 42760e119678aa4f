#!/bin/bash
# Full fine-tune of the whole model, ZeRO-2.
GPUS_PER_NODE=8
NNODES=1

MODEL="openbmb/MiniCPM-Llama3-V-2_5"
DATA="data/train.json"
EVAL_DATA="data/val.json"

DISTRIBUTED_ARGS="
    --nproc_per_node $GPUS_PER_NODE \
    --nnodes $NNODES
"
torchrun $DISTRIBUTED_ARGS finetune.py  \
    --model_name_or_path $MODEL \
    --data_path $DATA \
    --eval_data_path $EVAL_DATA \
    --bf16 true \
    --do_train \
    --tune_vision true \
    --model_max_length 2048 \
    --max_slice_nums 9 \
    --max_steps 10000 \
    --eval_steps 200 \
    --per_device_train_batch_size 8 \
    --per_device_eval_batch_size 8 \
    --gradient_accumulation_steps 1 \
    --evaluation_strategy "steps" \
    --learning_rate 1e-6 \
    --logging_steps 1 \
    --gradient_checkpointing true \
    --deepspeed ds_config_zero2.json
