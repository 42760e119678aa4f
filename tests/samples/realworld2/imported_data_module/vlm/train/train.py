from dataclasses import dataclass, field

import transformers

from vlm.data.builders import build_data_module


@dataclass
class DataArguments:
    data_path: str = field(default="pairs.json")


@dataclass
class TrainingArguments(transformers.TrainingArguments):
    model_max_length: int = field(default=2048)


def train():
    parser = transformers.HfArgumentParser((DataArguments, TrainingArguments))
    data_args, training_args = parser.parse_args_into_dataclasses()
    tokenizer = transformers.AutoTokenizer.from_pretrained("microsoft/phi-2")
    model = transformers.AutoModelForCausalLM.from_pretrained("microsoft/phi-2")
    data_module = build_data_module(tokenizer=tokenizer, data_args=data_args)
    trainer = transformers.Trainer(model=model, tokenizer=tokenizer, args=training_args, **data_module)
    trainer.train()


if __name__ == "__main__":
    train()
