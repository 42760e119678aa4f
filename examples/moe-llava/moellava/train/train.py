from dataclasses import dataclass, field
from typing import Dict, Optional

import transformers

from moellava.train.llava_trainer import LLaVATrainer


@dataclass
class ModelArguments:
    model_name_or_path: Optional[str] = field(default="facebook/opt-125m")
    version: Optional[str] = field(default="v0")
    image_tower: Optional[str] = field(default=None)


@dataclass
class DataArguments:
    data_path: Optional[str] = field(default=None, metadata={"help": "Path to the training data."})
    lazy_preprocess: bool = False
    image_folder: Optional[str] = field(default=None)
    image_aspect_ratio: str = "square"


@dataclass
class TrainingArguments(transformers.TrainingArguments):
    cache_dir: Optional[str] = field(default=None)
    optim: str = field(default="adamw_torch")
    model_max_length: int = field(
        default=512,
        metadata={"help": "Maximum sequence length."},
    )
    bits: int = field(default=16, metadata={"help": "How many bits to use."})
    lora_enable: bool = False
    lora_r: int = 128


def make_supervised_data_module(tokenizer, data_args) -> Dict:
    train_dataset = build_dataset(tokenizer, data_args)
    return dict(train_dataset=train_dataset, eval_dataset=None, data_collator=None)


def train():
    parser = transformers.HfArgumentParser((ModelArguments, DataArguments, TrainingArguments))
    model_args, data_args, training_args = parser.parse_args_into_dataclasses()
    model = transformers.AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)
    if training_args.gradient_checkpointing:
        model.gradient_checkpointing_enable()
    data_module = make_supervised_data_module(tokenizer=None, data_args=data_args)
    trainer = LLaVATrainer(model=model, args=training_args, **data_module)
    trainer.train()
