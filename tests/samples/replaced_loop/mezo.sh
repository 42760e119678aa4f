#!/bin/bash
MODEL=${MODEL:-facebook/opt-13b}
BS=${BS:-16}

python run.py \
    --model_name $MODEL \
    --output_dir result/zo \
    --max_steps 20000 \
    --load_float16 \
    --per_device_train_batch_size $BS \
    --learning_rate 1e-6 \
    --zo_eps 1e-3 \
    "$@"
