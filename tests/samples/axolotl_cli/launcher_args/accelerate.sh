#!/bin/bash
axolotl train examples/lora-8b.yml --sequence-len=2048 -- --num_processes 4
