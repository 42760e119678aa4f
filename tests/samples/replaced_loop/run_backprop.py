"""Backpropagation through HF's own loop, with a loss of the script's own."""
from dataclasses import dataclass

import torch
from transformers import AutoModelForCausalLM, HfArgumentParser, TrainingArguments

from trainer import LoggingTrainer


@dataclass
class OurArguments(TrainingArguments):
    model_name: str = "facebook/opt-13b"
    zo_eps: float = 1e-3
    load_float16: bool = False


def main():
    args = HfArgumentParser(OurArguments).parse_args_into_dataclasses()[0]
    dtype = torch.float16 if args.load_float16 else torch.float32
    model = AutoModelForCausalLM.from_pretrained(args.model_name, torch_dtype=dtype)
    trainer = LoggingTrainer(model=model, args=args, train_dataset=None)
    trainer.train()


if __name__ == "__main__":
    main()
