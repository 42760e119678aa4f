from dataclasses import dataclass, field

import transformers


@dataclass
class ModelArguments:
    model_name_or_path: str = field(default="lmsys/vicuna-7b-v1.5")


@dataclass
class TrainingArguments(transformers.TrainingArguments):
    model_max_length: int = field(default=2048)


def train():
    parser = transformers.HfArgumentParser((ModelArguments, TrainingArguments))
    model_args, training_args = parser.parse_args_into_dataclasses()
    model = transformers.AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)
    transformers.Trainer(model=model, args=training_args).train()
