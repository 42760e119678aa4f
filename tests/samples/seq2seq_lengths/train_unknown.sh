# the response limit comes from the caller
torchrun --nproc_per_node 1 main.py \
    --do_train \
    --model_name_or_path THUDM/chatglm-6b \
    --output_dir ./output/pt \
    --max_source_length 256 \
    --max_target_length "$TARGET_LEN" \
    --per_device_train_batch_size 1 \
    --fp16
