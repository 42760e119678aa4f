#!/bin/bash
swift sft sft.yaml --per_device_train_batch_size 2
