from dataclasses import dataclass, field
from typing import Optional

import transformers


@dataclass
class ModelArguments:
    llm_path: Optional[str] = field(default=None)
    use_ckpt: bool = field(default=False)


def main():
    parser = transformers.HfArgumentParser((ModelArguments, transformers.TrainingArguments))
    model_args, training_args = parser.parse_args_into_dataclasses()
    model = load(model_args.llm_path)
    if model_args.use_ckpt:
        model.language_model._set_gradient_checkpointing()
    trainer = transformers.Trainer(model=model, args=training_args, train_dataset=build(), eval_dataset=None)
    trainer.train()


if __name__ == "__main__":
    main()
