# the script's own limits: 1024 prompt tokens and 128 response tokens
torchrun --nproc_per_node 1 main.py \
    --do_train \
    --train_file data/train.json \
    --model_name_or_path THUDM/chatglm-6b \
    --output_dir ./output/pt \
    --per_device_train_batch_size 1 \
    --gradient_accumulation_steps 16 \
    --pre_seq_len 128 \
    --fp16
