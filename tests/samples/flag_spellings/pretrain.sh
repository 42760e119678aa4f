#!/bin/bash
# this parser refuses prefixes (allow_abbrev=False): `--micro-batch` stops the job at start
torchrun --nproc_per_node 8 pretrain.py --micro-batch 16 --seq-length 4096
