"""A setting assigned from another parsed argument after parsing (`args.max_seq_length = config.block_size`, as
reasoning-trace SFT scripts keep the length in a dataclass of their own): it takes the value the launch gives that
argument, and the place to edit is that argument's flag."""
from __future__ import annotations

from tests.conftest import write_tree

_SCRIPT = '''\
from dataclasses import dataclass, field

import transformers
import trl


@dataclass
class TrainingConfig:
    model_name: str = field(default="Qwen/Qwen2.5-7B-Instruct")
    block_size: int = field(default=16384)


def train():
    parser = transformers.HfArgumentParser((TrainingConfig, trl.SFTConfig))
    config, args = parser.parse_args_into_dataclasses()
    model = transformers.AutoModelForCausalLM.from_pretrained(config.model_name)
    args.max_seq_length = config.block_size
    trainer = trl.SFTTrainer(model, train_dataset=None, args=args)
    trainer.train()


if __name__ == "__main__":
    train()
'''
_LAUNCH = "torchrun --nproc-per-node 8 sft.py --output_dir out --bf16=True --max_seq_length=1024 {flag}\n"


def _settings(cli, tmp_path, flag: str) -> dict:
    write_tree(tmp_path, {"sft.py": _SCRIPT, "sft.sh": _LAUNCH.format(flag=flag)})
    _, document = cli.check_json(tmp_path, "sft.sh", "--isolated", "--no-cache", "--gpu", "h100-80gb")
    return document["runs"][0]["settings"]


def test_the_copied_arguments_flag_gives_the_value_and_the_place_to_edit(cli, tmp_path):
    settings = _settings(cli, tmp_path, "--block_size=32768")
    # The assignment in code beats `--max_seq_length=1024`, which SFTConfig parses and the script then replaces.
    assert settings["max_seq_length"] == {"value": 32768, "path": "sft.sh", "line": 1, "column": 100}


def test_without_a_flag_the_copied_arguments_default_counts(cli, tmp_path):
    settings = _settings(cli, tmp_path, "")
    assert settings["max_seq_length"] == {"value": 16384, "path": "sft.py", "line": 10, "column": 37}


def test_a_copy_under_a_branch_stays_unknown(cli, tmp_path):
    script = _SCRIPT.replace("    args.max_seq_length = config.block_size\n",
                             "    if config.model_name.endswith('-Long'):\n"
                             "        args.max_seq_length = config.block_size\n")
    write_tree(tmp_path, {"sft.py": script, "sft.sh": _LAUNCH.format(flag="--block_size=32768")})
    _, document = cli.check_json(tmp_path, "sft.sh", "--isolated", "--no-cache", "--gpu", "h100-80gb")
    assert document["runs"][0]["settings"]["max_seq_length"]["value"] != 32768
