#!/bin/bash
if [ $MASTER_ADDR ];then
    echo "multi-node run at $MASTER_ADDR"
else
    MASTER_ADDR=127.0.0.1
    NUM_MACHINES=1
    MACHINE_RANK=0
fi
if [ -n "$FAST" ]; then
    SEQ_LEN=1024
else
    SEQ_LEN=4096
fi
PER_HOST=$(nvidia-smi --list-gpus | wc -l)
# BATCH=64
torchrun --nproc_per_node $PER_HOST --nnodes $NUM_MACHINES --node_rank=$MACHINE_RANK \
    --master_addr $MASTER_ADDR run/pretrain.py --seq_len $SEQ_LEN --batch $BATCH
