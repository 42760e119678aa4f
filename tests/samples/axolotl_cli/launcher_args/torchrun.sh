#!/bin/bash
axolotl train examples/lora-8b.yml --launcher torchrun -- --nproc_per_node 4 --nnodes 1
