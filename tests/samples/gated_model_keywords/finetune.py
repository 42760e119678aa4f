"""A fine-tuning script that quantizes the base model only when asked (`--use_qlora`) and wraps it in adapters only
when asked (`--use_lora`); its arguments are parsed by the project's own parser class, built on HfArgumentParser in
another module."""
from dataclasses import dataclass, field
from typing import Optional

import torch
from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
from transformers import AutoModelForCausalLM, BitsAndBytesConfig, Trainer

from project_args import ProjectArgumentParser


@dataclass
class FinetuneArguments:
    model_name_or_path: Optional[str] = field(default=None)
    max_seq_length: int = field(default=2048)
    per_device_train_batch_size: int = field(default=8)
    gradient_accumulation_steps: int = field(default=1)
    gradient_checkpointing: bool = field(default=False)
    bf16: bool = field(default=True)
    use_lora: bool = field(default=False)
    use_qlora: bool = field(default=False, metadata={"help": "load the base model in 4-bit"})
    lora_rank: int = field(default=64)


def main(args: FinetuneArguments) -> None:
    if args.use_qlora:
        quantization = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.bfloat16)
        model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path, quantization_config=quantization,
                                                     torch_dtype=torch.bfloat16)
    else:
        model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path, torch_dtype=torch.bfloat16)
    if args.use_lora:
        if args.use_qlora:
            model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=args.gradient_checkpointing)
        model = get_peft_model(model, LoraConfig(r=args.lora_rank, target_modules=["q_proj", "v_proj"]))
    Trainer(model=model, args=args).train()


if __name__ == "__main__":
    parser = ProjectArgumentParser((FinetuneArguments,))
    (arguments,) = parser.parse_args_into_dataclasses()
    main(arguments)
