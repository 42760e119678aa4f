from dataclasses import dataclass, field

from transformers import AutoModelForCausalLM, HfArgumentParser, Trainer, TrainingArguments


@dataclass
class ModelArguments:
    model_name_or_path: str = field(default="lmsys/vicuna-7b-v1.5")
    model_max_length: int = field(default=2048, metadata={"help": "tokens per row"})


def train():
    parser = HfArgumentParser((ModelArguments, TrainingArguments))
    model_args, training_args = parser.parse_args_into_dataclasses()
    model = AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)
    Trainer(model=model, args=training_args).train()


if __name__ == "__main__":
    train()
