"""A flag the pinned transformers no longer has (`--evaluation_strategy`, gone in 4.51) stops a job only when the
parser refuses unknown flags. `parse_args_into_dataclasses(return_remaining_strings=True)` hands them back
instead: the job starts, and the flag is dropped (a warning), or applied by the script itself (nothing to say).
Written in our own words after a VLM repository whose launchers kept the old name while its setup.py pinned
transformers 4.51.0."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import write_tree

_TRAIN = """from dataclasses import dataclass, field
from typing import Optional

import transformers


@dataclass
class ModelArguments:
    model_name_or_path: Optional[str] = field(default="lmsys/vicuna-7b-v1.5")


@dataclass
class DataArguments:
    data_path: str = field(default=None)


@dataclass
class TrainingArguments(transformers.TrainingArguments):
    model_max_length: int = field(default=2048)


def train():
    parser = transformers.HfArgumentParser((ModelArguments, DataArguments, TrainingArguments))
    {parse}
    model = transformers.AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)
    trainer = transformers.Trainer(model=model, args=training_args)
    trainer.train()


if __name__ == "__main__":
    train()
"""

_SETUP = """from setuptools import setup

setup(name="vlm", install_requires=["torch==2.1.2", "transformers==4.51.0", "deepspeed==0.14.4"])
"""

_LAUNCHER = """#!/bin/bash
torchrun --nproc_per_node 8 llava/train/train.py \\
    --model_name_or_path lmsys/vicuna-7b-v1.5 \\
    --bf16 True \\
    --per_device_train_batch_size 4 \\
    --gradient_checkpointing True \\
    --evaluation_strategy "no" \\
    --output_dir ./checkpoints/out
"""

_REFUSING = "model_args, data_args, training_args = parser.parse_args_into_dataclasses()"
_HANDING_BACK = ("model_args, data_args, training_args, remaining_args = "
                 "parser.parse_args_into_dataclasses(return_remaining_strings=True)")
_APPLYING = _HANDING_BACK + "\n    for key, value in zip(remaining_args[::2], remaining_args[1::2]):\n" \
                            "        setattr(training_args, key.lstrip('-'), value)"


def _tl305(cli, folder: Path, parse: str):
    write_tree(folder, {"setup.py": _SETUP, "scripts/train.sh": _LAUNCHER,
                        "llava/__init__.py": "", "llava/train/train.py": _TRAIN.replace("{parse}", parse)})
    _, document = cli.check_json(folder, "--isolated", "--no-cache", "--gpu", "a100-80gb")
    return [(f["severity"], f["line"]) for f in document["findings"] if f["code"] == "TL305"]


@pytest.mark.parametrize("parse, expected", [
    (_REFUSING, [("error", 7)]),  # HfArgumentParser: "Some specified arguments are not used"
    (_HANDING_BACK, [("warning", 7)]),  # handed back and never read: dropped
    (_APPLYING, []),  # the script applies what it is handed back: its effect is unknown
])
def test_a_removed_field_is_refused_only_by_a_parser_that_refuses_unknown_flags(cli, tmp_path, parse, expected):
    assert _tl305(cli, tmp_path, parse) == expected
