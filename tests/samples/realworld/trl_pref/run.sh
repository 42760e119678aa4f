torchrun --nproc_per_node 2 prefer.py --model_name_or_path Qwen/Qwen2.5-0.5B --output_dir out \
    --per_device_train_batch_size 2 --beta 0.1 --loss_type sigmoid --rpo_alpha 1
