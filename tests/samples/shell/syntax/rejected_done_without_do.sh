#!/bin/bash
for SEED in 1 2 3
    python finetune.py --seed $SEED
done
