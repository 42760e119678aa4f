#!/bin/bash
# Single-node job; the rendezvous arguments live in one quoted string.
NODES=1
GPU_COUNT=${GPUS:-4}
RDZV_PORT=29400

LAUNCH_OPTS="
    --nproc_per_node $GPU_COUNT \
    --nnodes $NODES \
    --master_port $RDZV_PORT
"

MICRO=8
ACCUM=$((32 / MICRO))

torchrun $LAUNCH_OPTS src/train_vlm.py \
    --per_device_train_batch_size $MICRO \
    --gradient_accumulation_steps ${ACCUM} \
    --output_dir "runs/bs${MICRO}" \
    --report_to 'none'
