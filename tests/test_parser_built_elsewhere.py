"""Options added to a parser the script does not build (a Megatron-style `extra_args_provider(parser)` handed to
the framework's own argument code) join a parser with options of its own: the script's options alone do not tell
which flags are accepted. Written in our own words after Megatron-DeepSpeed's fine-tuning examples."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import write_tree

_ENTRY = '''from megatron import get_args
from megatron.training import pretrain


def add_validation_args(parser):
    group = parser.add_argument_group(title="validation set")
    group.add_argument("--data-path2", nargs="*", default=None)
    group.add_argument("--eval-ppl", action="store_true", default=False)
    return parser


if __name__ == "__main__":
    {main}
'''
_HANDED_ON = "pretrain(extra_args_provider=add_validation_args)"
_BUILT_HERE = ("import argparse\n    parser = argparse.ArgumentParser()\n    add_validation_args(parser)\n"
               "    args = parser.parse_args()")
_OWN_CLASS = ("import argparse\n\n    class Parser(argparse.ArgumentParser):\n        pass\n\n"
              "    parser = add_validation_args(Parser())\n    args = parser.parse_args()")

_TRAINING = '''from megatron.initialize import initialize_megatron


def pretrain(extra_args_provider=None):
    initialize_megatron(extra_args_provider=extra_args_provider)
'''

_LAUNCHER = """#!/bin/bash
python -m torch.distributed.run --nproc_per_node 8 examples/finetune_gpt.py \\
     --num-layers 24 \\
     --hidden-size 2048 \\
     --micro-batch-size 4 \\
     --seq-length 2048 \\
     --data-path2 data/valid \\
     --fp16
"""


def _unknown_flags(cli, folder: Path, main: str) -> list:
    write_tree(folder, {
        "examples/finetune_gpt.py": _ENTRY.replace("{main}", main),
        "examples/finetune.sh": _LAUNCHER,
        "megatron/__init__.py": "def get_args():\n    pass\n",
        "megatron/training.py": _TRAINING,
        "megatron/initialize.py": "def initialize_megatron(extra_args_provider=None):\n    pass\n",
    })
    _, document = cli.check_json(folder, "--isolated", "--no-cache", "--gpu", "a100-80gb")
    return sorted(f["message"].split("`")[1] for f in document["findings"] if f["code"] == "TL305")


def test_options_added_to_a_parser_built_elsewhere_leave_the_accepted_flags_unknown(cli, tmp_path):
    assert _unknown_flags(cli, tmp_path, _HANDED_ON) == []


@pytest.mark.parametrize("main", [_BUILT_HERE, _OWN_CLASS])
def test_a_parser_the_script_builds_itself_refuses_the_flags_it_lacks(cli, tmp_path, main):
    assert _unknown_flags(cli, tmp_path, main) == ["--fp16", "--hidden-size", "--micro-batch-size", "--num-layers",
                                                    "--seq-length"]
