#!/bin/bash
# Launched from another framework's checkout: its trainer, not transformers', reads these flags.
CHECKPOINT=gs://bucket/checkpoints/base-7b/model_and_optim
LR=8e-5
python src/scripts/train/sft/base-sft.py train \
    sft-7b-${LR} \
        $CHECKPOINT \
        cluster/a \
    --train_module.optim.lr=$LR \
    --seq_len=32768 \
    --launch.num_gpus=8 \
    --num_nodes=4 \
    --global_batch_size=1048576 \
    --model_name=olmo2-7b
