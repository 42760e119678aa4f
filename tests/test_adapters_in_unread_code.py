"""A script whose arguments define a LoRA rank, with no switch for it, wraps its model in adapters somewhere: when
that happens in code trainlint has not read (a model class of the repository), which parameters train is unknown,
and the model states are not judged as a full fine-tune's. Written in our own words after LLaVA-RLHF's reward
model scripts."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import write_tree

_ENTRY = '''from dataclasses import dataclass, field
from typing import List, Optional

import transformers

from models.reward_model import RewardModel, RewardModelTrainer


@dataclass
class ModelArguments:
    model_name_or_path: Optional[str] = field(default="lmsys/vicuna-13b-v1.5")


@dataclass
class TrainingArguments(transformers.TrainingArguments):
    model_max_length: int = field(default=2048)
{switch}    lora_r: int = field(default=64)
    lora_alpha: float = field(default=16)
    lora_modules: Optional[List[str]] = field(default=None)


def train():
    parser = transformers.HfArgumentParser((ModelArguments, TrainingArguments))
    model_args, training_args = parser.parse_args_into_dataclasses()
    model = RewardModel(model_args, training_args)
    trainer = RewardModelTrainer(model=model, args=training_args)
    trainer.train()


if __name__ == "__main__":
    train()
'''

_LAUNCHER = """#!/bin/bash
torchrun --standalone --nnodes=1 --nproc-per-node=8 finetune_lora_rm.py \\
    --model_name_or_path lmsys/vicuna-13b-v1.5 \\
    --per_device_train_batch_size 4 \\
    --bf16 True \\
    --gradient_checkpointing True \\
    --output_dir out {extra}
"""


def _errors(cli, folder: Path, switch: str = "", extra: str = "") -> list:
    write_tree(folder, {
        "finetune_lora_rm.py": _ENTRY.replace("{switch}", switch),
        "models/__init__.py": "",
        "models/reward_model.py": "import transformers\n\n\nclass RewardModel:\n    pass\n\n\n"
                                  "class RewardModelTrainer(transformers.Trainer):\n    pass\n",
        "scripts/train_reward_model.sh": _LAUNCHER.replace("{extra}", extra),
    })
    _, document = cli.check_json(folder, "--isolated", "--no-cache", "--gpu", "a100-80gb")
    return sorted(f["code"] for f in document["findings"] if f["severity"] == "error")


@pytest.mark.parametrize("extra", ["", "--lora_r 16"])
def test_a_lora_rank_with_no_adapters_in_view_leaves_the_trainable_set_unknown(cli, tmp_path, extra):
    assert _errors(cli, tmp_path, extra=extra) == []


@pytest.mark.parametrize("switch, extra", [
    ("", "--lora_r 0"),  # a rank of zero builds no adapters
    ("    lora_enable: bool = field(default=False)\n", ""),  # a switch, left off
    ("    use_peft: bool = field(default=False)\n", ""),  # TRL's switch, left off
])
def test_no_adapters_leave_a_full_fine_tune(cli, tmp_path, switch, extra):
    # 13B with AdamW and no ZeRO: about 16 bytes per parameter on every GPU.
    assert _errors(cli, tmp_path, switch, extra) == ["TL108"]
