from dataclasses import dataclass, field
from typing import Optional

import transformers


@dataclass
class ModelArguments:
    model_name_or_path: Optional[str] = field(default="lmsys/vicuna-7b-v1.5")


@dataclass
class TrainingArguments(transformers.TrainingArguments):
    model_max_length: int = field(default=2048)


def load_eval_set():
    from datasets import load_dataset

    return load_dataset("json", data_files="eval.jsonl")["train"]


def main():
    parser = transformers.HfArgumentParser((ModelArguments, TrainingArguments))
    model_args, training_args = parser.parse_args_into_dataclasses()
    model = transformers.AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)
    eval_set = load_eval_set()
    trainer = transformers.Trainer(model=model, args=training_args, train_dataset=None, eval_dataset=eval_set)
    trainer.train()


if __name__ == "__main__":
    main()
