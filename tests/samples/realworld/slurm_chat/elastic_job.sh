# The node count comes from the cluster's environment.
PER_NODE=${PER_NODE:-8}
torchrun --node-rank=$RANK --nnodes=$NUM_NODES --nproc-per-node=$PER_NODE finetune.py \
    --llm_path lmsys/vicuna-7b-v1.5 --output_dir out --per_device_train_batch_size 1
