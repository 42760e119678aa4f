import json
from dataclasses import dataclass, field
from typing import Optional

import transformers
from peft import LoraConfig, get_peft_model

from trainer import CPMTrainer


@dataclass
class ModelArguments:
    model_name_or_path: Optional[str] = field(default="openbmb/MiniCPM-V-2")


@dataclass
class DataArguments:
    data_path: str = field(default=None, metadata={"help": "Path to the training data."})
    eval_data_path: str = field(default=None, metadata={"help": "Path to the evaluation data."})


@dataclass
class TrainingArguments(transformers.TrainingArguments):
    cache_dir: Optional[str] = field(default=None)
    model_max_length: int = field(default=2048, metadata={"help": "Maximum sequence length."})
    tune_vision: Optional[bool] = field(default=True)
    use_lora: Optional[bool] = field(default=False)
    max_slice_nums: Optional[int] = field(default=9)


def make_data_module(data_args):
    train_dataset = load(data_args.data_path)
    if data_args.eval_data_path:
        eval_dataset = load(data_args.eval_data_path)
    else:
        eval_dataset = None
    return dict(train_dataset=train_dataset, eval_dataset=eval_dataset)


def train():
    parser = transformers.HfArgumentParser((ModelArguments, DataArguments, TrainingArguments))
    model_args, data_args, training_args = parser.parse_args_into_dataclasses()
    model = transformers.AutoModel.from_pretrained(model_args.model_name_or_path, trust_remote_code=True)
    if training_args.use_lora:
        model = get_peft_model(model, LoraConfig(r=64))
    data_module = make_data_module(data_args)
    trainer = CPMTrainer(model=model, args=training_args, **data_module)
    trainer.train()


if __name__ == "__main__":
    train()
