from dataclasses import dataclass, field

import transformers
from transformers import HfArgumentParser, Trainer, TrainingArguments


@dataclass
class ModelArguments:
    model_name_or_path: str = field(default="meta-llama/Llama-2-7b-hf")
    trainable_layers: str = field(default="layers.31,norm,lm_head")


def train():
    parser = HfArgumentParser((ModelArguments, TrainingArguments))
    model_args, training_args = parser.parse_args_into_dataclasses()
    model = transformers.AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)
    trainable = model_args.trainable_layers.split(",")
    for name, param in model.named_parameters():
        if not any(layer in name for layer in trainable):
            param.requires_grad = False
    Trainer(model=model, args=training_args).train()


if __name__ == "__main__":
    train()
