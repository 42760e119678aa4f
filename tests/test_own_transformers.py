"""A repository that ships its own fork of `transformers` (installed from its `src/` with `pip install -e .`) gives
TrainingArguments fields HF's has not: the flags its launchers pass are not judged against HF's list. Written in our
own words after microsoft/LoRA's NLU examples."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import write_tree

_RUN_GLUE = '''from dataclasses import dataclass, field
from typing import Optional

from transformers import AutoModelForSequenceClassification, HfArgumentParser, Trainer, TrainingArguments


@dataclass
class ModelArguments:
    model_name_or_path: str = field(default="microsoft/deberta-v2-xxlarge")


def main():
    parser = HfArgumentParser((ModelArguments, TrainingArguments))
    model_args, training_args = parser.parse_args_into_dataclasses()
    model = AutoModelForSequenceClassification.from_pretrained(model_args.model_name_or_path,
                                                               cls_dropout=training_args.cls_dropout)
    Trainer(model=model, args=training_args).train()


if __name__ == "__main__":
    main()
'''

_FORK = {
    "setup.py": "from setuptools import find_packages, setup\n\nsetup(name='transformers', package_dir={'': 'src'}, "
                "packages=find_packages('src'))\n",
    "src/transformers/__init__.py": "from .training_args import TrainingArguments\n",
    "src/transformers/training_args.py": "from dataclasses import dataclass, field\n\n\n@dataclass\n"
                                         "class TrainingArguments:\n    cls_dropout: float = field(default=0.1)\n",
}

_LAUNCHER = """num_gpus=8
python -m torch.distributed.launch --nproc_per_node=$num_gpus \\
examples/text-classification/run_glue.py \\
--model_name_or_path microsoft/deberta-v2-xxlarge \\
--per_device_train_batch_size 8 \\
--fp16 \\
--cls_dropout 0.15 \\
--output_dir ./output
"""


def _unknown_flags(cli, folder: Path, files: dict) -> list:
    write_tree(folder, {"examples/text-classification/run_glue.py": _RUN_GLUE, "deberta_cola.sh": _LAUNCHER, **files})
    _, document = cli.check_json(folder, "--isolated", "--no-cache", "--gpu", "a100-80gb")
    return [f["message"].split("`")[1] for f in document["findings"] if f["code"] == "TL305"]


@pytest.mark.parametrize("files, expected", [
    (_FORK, []),  # the repository's own TrainingArguments defines it
    ({}, ["--cls_dropout"]),  # HF's has no such field
])
def test_a_flag_of_the_repositorys_own_trainingarguments(cli, tmp_path, files, expected):
    assert _unknown_flags(cli, tmp_path, files) == expected
