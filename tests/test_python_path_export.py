"""A launcher that exports `PYTHONPATH=src:$PYTHONPATH` and runs `deepspeed src/training/train.py`, whose argument
dataclasses live in `src/training/params.py` (imported as `training.params`): the export puts `src` on the module
path, so the dataclasses are read. Written after vision fine-tune repositories laid out this way."""
from __future__ import annotations

from tests.conftest import write_tree

_TRAIN = '''\
import transformers
from transformers import HfArgumentParser, Trainer

from training.params import ModelArguments, TrainingArguments


def train():
    parser = HfArgumentParser((ModelArguments, TrainingArguments))
    model_args, training_args = parser.parse_args_into_dataclasses()
    model = transformers.AutoModelForCausalLM.from_pretrained(model_args.model_id)
    Trainer(model=model, args=training_args, train_dataset=None).train()


if __name__ == "__main__":
    train()
'''
_PARAMS = '''\
from dataclasses import dataclass, field

import transformers


@dataclass
class ModelArguments:
    model_id: str = field(default="microsoft/Phi-3.5-vision-instruct")


@dataclass
class TrainingArguments(transformers.TrainingArguments):
    max_seq_length: int = field(default=4096)
    lora_enable: bool = False
    num_crops: int = 16
'''
_LAUNCH = ("#!/bin/bash\n{export}\ndeepspeed src/training/train.py --model_id microsoft/Phi-3.5-vision-instruct "
           "--bf16 True --per_device_train_batch_size 2 --output_dir out\n")


def _settings(cli, tmp_path, export: str) -> dict:
    write_tree(tmp_path, {"src/training/__init__.py": "", "src/training/train.py": _TRAIN,
                          "src/training/params.py": _PARAMS, "scripts/finetune.sh": _LAUNCH.format(export=export)})
    _, document = cli.check_json(tmp_path, "scripts/finetune.sh", "--isolated", "--no-cache", "--gpu", "a100-80gb")
    return document["runs"][0]["settings"]


def test_an_exported_python_path_reaches_the_dataclasses(cli, tmp_path):
    settings = _settings(cli, tmp_path, "export PYTHONPATH=src:$PYTHONPATH")
    assert settings["max_seq_length"] == {"value": 4096, "path": "src/training/params.py", "line": 13, "column": 41}
    assert settings["image_tiles"]["value"] == 16  # Phi-3-vision's `num_crops`


def test_without_the_export_the_package_is_not_found(cli, tmp_path):
    settings = _settings(cli, tmp_path, "")
    assert "max_seq_length" not in settings or settings["max_seq_length"]["path"] != "src/training/params.py"
