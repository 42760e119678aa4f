#!/bin/bash
accelerate launch --config_file configs/two_gpu_fsdp.yaml src/train.py sft.yaml
