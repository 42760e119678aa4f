# Four GPUs, weights sharded by FSDP instead of DeepSpeed.
torchrun --nproc_per_node=4 --master_port=29501 train.py \
    --model_name_or_path huggyllama/llama-7b \
    --data_path data/chats.json \
    --bf16 True \
    --output_dir out/vicuna-7b \
    --per_device_train_batch_size 2 \
    --per_device_eval_batch_size 16 \
    --gradient_accumulation_steps 16 \
    --evaluation_strategy "steps" \
    --eval_steps 1500 \
    --fsdp "full_shard auto_wrap" \
    --fsdp_transformer_layer_cls_to_wrap 'LlamaDecoderLayer' \
    --model_max_length 2048 \
    --gradient_checkpointing True
