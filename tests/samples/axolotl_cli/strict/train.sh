#!/bin/bash
axolotl train examples/lora-8b.yml --num-processes 8 --micro-batch-size 64 --sequence-len 2048
