"""Supervised fine-tuning with optional 4-bit loading and LoRA adapters."""
from dataclasses import dataclass, field
from typing import Optional

from transformers import HfArgumentParser, Trainer, TrainingArguments

from model_setup import build_model, load_splits


@dataclass
class ModelArguments:
    model_name_or_path: str = field(metadata={"help": "checkpoint to start from"})
    use_4bit_quantization: Optional[bool] = field(default=False, metadata={"help": "load the base in 4 bits"})
    use_8bit_quantization: Optional[bool] = field(default=False)
    use_peft_lora: Optional[bool] = field(default=False)
    lora_r: Optional[int] = field(default=64)


@dataclass
class DataArguments:
    dataset_name: str = field(default="local/chat")
    max_seq_length: int = field(default=2048)


def main(model_args, data_args, training_args):
    model, tokenizer = build_model(model_args)
    train_split, eval_split = load_splits(tokenizer, data_args)
    trainer = Trainer(model=model, args=training_args, train_dataset=train_split, eval_dataset=eval_split)
    trainer.train()


if __name__ == "__main__":
    parser = HfArgumentParser((ModelArguments, DataArguments, TrainingArguments))
    model_args, data_args, training_args = parser.parse_args_into_dataclasses()
    main(model_args, data_args, training_args)
