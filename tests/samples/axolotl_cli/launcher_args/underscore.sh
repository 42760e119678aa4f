#!/bin/bash
axolotl train examples/lora-8b.yml --micro_batch_size 64 --num-processes 2
