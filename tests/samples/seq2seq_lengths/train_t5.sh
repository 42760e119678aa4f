deepspeed --num_gpus 8 seq2seq_main.py \
    --deepspeed ds_full.json \
    --do_train \
    --model_name_or_path google/flan-t5-large \
    --output_dir ./output/flan \
    --max_source_length 1024 \
    --max_target_length 16 \
    --per_device_train_batch_size 8 \
    --bf16
