#!/bin/bash
# For A100 80G
DIR=`pwd`
export PYTHONPATH=$DIR

if [ $MASTER_ADDR ];then
    echo $MASTER_ADDR
else
    MASTER_ADDR=127.0.0.1
    WORLD_SIZE=1
    RANK=0
fi

DISTRIBUTED_ARGS="--nproc_per_node 8 \
                  --nnodes ${WORLD_SIZE} \
                  --node_rank ${RANK} \
                  --master_addr ${MASTER_ADDR}"

max_length=2048
micro_batch_size=4
global_batch_size=256
gradient_accumulation_steps=1
eval_iter=50

options=" \
	--pretrained-ckpt checkpoints/mplug-owl-llama-7b \
	--seq-length ${max_length} \
	--micro-batch-size ${micro_batch_size} \
	--global-batch-size ${global_batch_size} \
	--gradient-accumulation-steps ${gradient_accumulation_steps} \
	--eval-iters ${eval_iter} \
	--use-lora \
	--gradient-checkpointing \
	--bf16"

python -m torch.distributed.launch $DISTRIBUTED_ARGS ./pipeline/train.py $@ ${options} 2>&1 | tee train.log
