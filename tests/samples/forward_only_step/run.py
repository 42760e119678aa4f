"""Fine-tunes a causal LM either with backpropagation or with a zeroth-order estimate of the gradient."""
from dataclasses import dataclass, field

from transformers import AutoModelForCausalLM, HfArgumentParser, TrainingArguments

from zo_trainer import ZerothOrderTrainer


@dataclass
class ExperimentArguments(TrainingArguments):
    model_name: str = field(default="facebook/opt-1.3b")
    # "regular": HF's step with a backward pass; "zo": two perturbed forward passes per step
    trainer: str = field(default="regular")
    zo_eps: float = field(default=1e-3)
    max_length: int = field(default=2048)


def main():
    args = HfArgumentParser(ExperimentArguments).parse_args_into_dataclasses()[0]
    model = AutoModelForCausalLM.from_pretrained(args.model_name)
    trainer = ZerothOrderTrainer(model=model, args=args, train_dataset=None)
    trainer.train()


if __name__ == "__main__":
    main()
