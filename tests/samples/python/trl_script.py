"""A TRL-style script: one dataclass parser and an SFTConfig built in code."""
import dataclasses

import fire
from transformers import HfArgumentParser, TrainingArguments
from trl import SFTConfig, SFTTrainer


@dataclasses.dataclass
class ScriptArguments:
    dataset_name: str = dataclasses.field(default="org/chat-data")
    max_seq_length: int = dataclasses.field(default=1024 + 512)


def main(output_dir="out"):
    parser = HfArgumentParser(TrainingArguments)
    (training_args, leftover) = parser.parse_args_into_dataclasses(return_remaining_strings=True)
    script_parser = HfArgumentParser(dataclass_types=[ScriptArguments])
    config = SFTConfig(
        output_dir=output_dir,
        per_device_train_batch_size=2,
        gradient_accumulation_steps=8,
        bf16=True,
        max_seq_length=2 ** 11,
        eval_strategy="no",
    )
    trainer = SFTTrainer(model="org/base", args=config, train_dataset=[])
    trainer.train()


fire.Fire(main)
