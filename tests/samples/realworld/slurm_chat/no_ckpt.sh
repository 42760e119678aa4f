torchrun --nproc_per_node 8 finetune.py --llm_path lmsys/vicuna-7b-v1.5 --output_dir out \
    --per_device_train_batch_size 1 --use_ckpt False
