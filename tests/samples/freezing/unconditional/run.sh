torchrun --nproc_per_node 1 finetune.py \
    --model_name_or_path meta-llama/Llama-2-7b-hf \
    --per_device_train_batch_size 1 \
    --gradient_checkpointing True \
    --fp16 True \
    --output_dir out
