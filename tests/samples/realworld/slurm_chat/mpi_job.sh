mpirun -np 4 --bind-to none python finetune.py --llm_path lmsys/vicuna-7b-v1.5 --output_dir out \
    --per_device_train_batch_size 2
