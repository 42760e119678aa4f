"""A chat fine-tuning entry script: argparse plus DeepSpeed's own arguments, the engine config built in code."""
import argparse

import deepspeed
import torch
from transformers import AutoModelForCausalLM

from engine.adapters import convert_linears_to_lora
from engine.zero_config import build_frozen_config, build_zero_config


def parse_args():
    parser = argparse.ArgumentParser(description="supervised fine-tuning")
    parser.add_argument("--model_name_or_path", type=str, required=True)
    parser.add_argument("--per_device_train_batch_size", type=int, default=8)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
    parser.add_argument("--max_seq_len", type=int, default=256)
    parser.add_argument("--gradient_checkpointing", action="store_true")
    parser.add_argument("--zero_stage", type=int, default=0)
    parser.add_argument("--offload", action="store_true")
    parser.add_argument("--offload_frozen_model", action="store_true")
    parser.add_argument("--dtype", type=str, default="fp16", choices=["fp16", "bf16"])
    parser.add_argument("--lora_dim", type=int, default=0)
    parser.add_argument("--output_dir", type=str, default=None)
    parser.add_argument("--local_rank", type=int, default=-1)
    parser = deepspeed.add_config_arguments(parser)
    return parser.parse_args()


def main():
    args = parse_args()
    ds_config = build_zero_config(offload=args.offload, dtype=args.dtype, stage=args.zero_stage,
                                  log_dir="runs")
    ds_config["train_micro_batch_size_per_gpu"] = args.per_device_train_batch_size
    frozen_config = build_frozen_config(args.offload_frozen_model, args.dtype, 3)
    model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path)
    frozen = AutoModelForCausalLM.from_pretrained(args.model_name_or_path)
    if args.gradient_checkpointing:
        model.gradient_checkpointing_enable()
    if args.lora_dim > 0:
        model = convert_linears_to_lora(model, args.lora_dim)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
    model, optimizer, _, _ = deepspeed.initialize(model=model, optimizer=optimizer, args=args, config=ds_config)
    frozen, *_ = deepspeed.initialize(model=frozen, config=frozen_config)


if __name__ == "__main__":
    main()
