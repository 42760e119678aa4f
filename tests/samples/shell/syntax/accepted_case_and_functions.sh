#!/bin/bash
size() { case "$1" in 7b|13b) echo 4;; (70b) echo 1;; *) echo 8;; esac; }
function run {
    local batch
    batch=$(size "$1")
    torchrun --nproc_per_node 8 finetune.py --per_device_train_batch_size "$batch"
}
for ((i = 0; i < 2; i++)); do run 7b; done
while read -r name; do [[ $name =~ ^(7b|13b)$ ]] && run "$name"; done < <(printf '7b\n')
