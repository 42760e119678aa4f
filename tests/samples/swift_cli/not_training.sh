#!/bin/bash
CUDA_VISIBLE_DEVICES=0 swift infer --model Qwen/Qwen2.5-7B-Instruct --max_new_tokens 512
swift build -c release
