torchrun --nproc_per_node=2 train.py \
    --model_name_or_path huggyllama/llama-7b \
    --per_device_train_batch_size 1 \
    --fsdp "shard_grad_op offload auto_wrap"
