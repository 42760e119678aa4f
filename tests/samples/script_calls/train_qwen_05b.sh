#!/bin/bash
# The micro-batch is left to the called script's default.
bash scripts/finetune.sh Qwen/Qwen2-0.5B 2048
