from dataclasses import dataclass, field

from transformers import HfArgumentParser
from trl import DPOConfig as BaseDPOConfig


class PrefConfig(BaseDPOConfig):
    pass


@dataclass
class ModelArguments:
    model_name_or_path: str = field(default="Qwen/Qwen2.5-0.5B")


def main():
    parser = HfArgumentParser((ModelArguments, PrefConfig))
    model_args, config = parser.parse_args_into_dataclasses()
    trainer = PrefTrainer(model=model_args.model_name_or_path, args=config)
    trainer.train()


if __name__ == "__main__":
    main()
