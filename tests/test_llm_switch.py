"""`freeze_backbone` freezes the language model in LLaVA's train.py, and the vision model in InternVL's, which has a
switch of its own for the language model (`freeze_llm`). A script that has one names the LLM with it."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import write_tree
from trainlint.checks._examples import TRAIN_PY, ZERO2
from trainlint.linter import lint, make_target

_LLM_SWITCH = TRAIN_PY.replace(
    "    vision_tower: Optional[str] = field(default=None)\n",
    "    vision_tower: Optional[str] = field(default=None)\n"
    "    freeze_llm: bool = field(default=False)\n"
    "    freeze_backbone: bool = field(default=False)\n",
).replace("{eval_dataset}", "None")
_BACKBONE_ONLY = TRAIN_PY.replace(
    "    vision_tower: Optional[str] = field(default=None)\n",
    "    vision_tower: Optional[str] = field(default=None)\n"
    "    freeze_backbone: bool = field(default=False)\n",
).replace("{eval_dataset}", "None")
_LAUNCHER = ("torchrun --nproc_per_node 8 train.py --deepspeed zero2.json --model_name_or_path "
             "internlm/internlm2-chat-7b --bf16 True --per_device_train_batch_size 1 --model_max_length 2048 "
             "--gradient_checkpointing True --output_dir out {flags}\n")


def _optimizer_gib(tmp_path: Path, train_py: str, flags: str) -> float:
    write_tree(tmp_path, {"train.py": train_py, "zero2.json": ZERO2, "run.sh": _LAUNCHER.format(flags=flags)})
    result = lint([tmp_path / "run.sh"], make_target(gpu="a100-80gb", num_gpus=8))
    (estimate,) = result.estimates.values()
    return estimate.breakdown.get("optimizer", 0.0)


@pytest.mark.parametrize("flags, trains", [
    ("--freeze_backbone True --freeze_llm False", True),  # InternVL: the vision model is frozen, the LLM trains
    ("--freeze_backbone True --freeze_llm True", False),
    ("--freeze_backbone False", True),  # freeze_llm's default, False
])
def test_a_script_with_its_own_llm_switch_names_the_llm_with_it(tmp_path, flags, trains):
    # ZeRO-2 over 8 GPUs: AdamW's fp32 states of a 7.7B LLM are about 14 GiB per GPU when it trains.
    assert (_optimizer_gib(tmp_path, _LLM_SWITCH, flags) > 10) is trains


def test_without_one_freeze_backbone_freezes_the_llm(tmp_path):
    assert _optimizer_gib(tmp_path, _BACKBONE_ONLY, "--freeze_backbone True") < 1
