import os
import sys

from transformers import AutoModelForCausalLM, HfArgumentParser
from transformers.deepspeed import HfDeepSpeedConfig

from arguments import DataArguments, FusedTrainingArguments, ModelArguments
from fused_trainer import FusedTrainer


def train():
    parser = HfArgumentParser((ModelArguments, DataArguments, FusedTrainingArguments))
    if sys.argv[-1].endswith(".yaml"):
        model_args, data_args, training_args = parser.parse_yaml_file(yaml_file=os.path.abspath(sys.argv[-1]))
    else:
        model_args, data_args, training_args = parser.parse_args_into_dataclasses()
    ds_config = training_args.deepspeed
    dschf = HfDeepSpeedConfig(ds_config)
    model = AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)
    trainer = FusedTrainer(model=model, training_args=training_args, train_dataloader=None)
    trainer.train()


if __name__ == "__main__":
    train()
