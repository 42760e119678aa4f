#!/bin/bash
axolotl train examples/lora-8b.yml --num-processes 2 --micro-batch-size=16
