"""A chat fine-tune whose data module may hold an evaluation split."""
from dataclasses import dataclass, field
from typing import Optional

import transformers


@dataclass
class ModelArguments:
    model_name_or_path: Optional[str] = field(default="facebook/opt-125m")


@dataclass
class DataArguments:
    data_path: str = field(default=None)
    eval_data_path: str = field(default=None)


@dataclass
class TrainingArguments(transformers.TrainingArguments):
    model_max_length: int = field(default=512)


def build_data(data_args):
    train_set = load(data_args.data_path)
    eval_set = load(data_args.eval_data_path) if data_args.eval_data_path else None
    return dict(train_dataset=train_set, eval_dataset=eval_set)


def train():
    parser = transformers.HfArgumentParser((ModelArguments, DataArguments, TrainingArguments))
    model_args, data_args, training_args = parser.parse_args_into_dataclasses()
    model = transformers.AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)
    module = build_data(data_args)
    trainer = transformers.Trainer(model=model, args=training_args, **module)
    trainer.train()


if __name__ == "__main__":
    train()
