#!/bin/bash
set -eux

axolotl preprocess train.yaml
axolotl train train.yaml --launcher torchrun -- --nproc_per_node 8
