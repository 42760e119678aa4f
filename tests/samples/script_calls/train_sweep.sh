#!/bin/bash
# EXTRA may hold several words: the arguments after it are not where they are written.
bash scripts/finetune.sh $EXTRA Qwen/Qwen2-7B 8192 16
