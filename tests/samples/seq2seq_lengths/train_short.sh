LR=1e-4

deepspeed --num_gpus=4 main.py \
    --deepspeed ds_full.json \
    --do_train \
    --train_file data/train.json \
    --prompt_column content \
    --response_column summary \
    --model_name_or_path THUDM/chatglm-6b \
    --output_dir ./output/full-$LR \
    --max_source_length 64 \
    --max_target_length 64 \
    --per_device_train_batch_size 4 \
    --gradient_accumulation_steps 1 \
    --learning_rate $LR \
    --fp16
