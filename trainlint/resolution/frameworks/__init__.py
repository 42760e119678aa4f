"""The frameworks a job may run under, each in its own module behind one interface (`Framework`):
the defaults it fills in and the knobs it derives. Adding a framework is a module and a line here."""
from __future__ import annotations

from typing import Mapping

from trainlint.core import Setting
from trainlint.resolution.frameworks.accelerate import ACCELERATE
from trainlint.resolution.frameworks.axolotl import AXOLOTL, writes_recipe
from trainlint.resolution.frameworks.base import Derivation, DeriveContext, Framework, Stage
from trainlint.resolution.frameworks.deepspeed import DEEPSPEED
from trainlint.resolution.frameworks.hf_trainer import HF_ARGUMENTS, HF_TRAINER
from trainlint.resolution.frameworks.llamafactory import LLAMAFACTORY
from trainlint.resolution.frameworks.llamafactory import writes_recipe as writes_llamafactory_recipe
from trainlint.resolution.frameworks.llamafactory_v1 import LLAMAFACTORY_V1
from trainlint.resolution.frameworks.llamafactory_v1 import writes_recipe as writes_llamafactory_v1_recipe
from trainlint.resolution.frameworks.openrlhf import OPENRLHF
from trainlint.resolution.precedence import Candidates

# The order derivations of one stage run in: accelerate's mixed precision before LLaMA-Factory's
# pure_bf16 (the later wins the tie on bf16), LLaMA-Factory's finetuning_type before axolotl's adapter.
FRAMEWORKS = (HF_TRAINER, ACCELERATE, DEEPSPEED, LLAMAFACTORY, AXOLOTL, OPENRLHF)

__all__ = ["ACCELERATE", "AXOLOTL", "DEEPSPEED", "FRAMEWORKS", "HF_ARGUMENTS", "HF_TRAINER", "LLAMAFACTORY",
           "LLAMAFACTORY_V1", "OPENRLHF", "Derivation", "DeriveContext", "Framework", "Stage", "derive",
           "recipe_framework"]


def derive(candidates: Candidates, context: DeriveContext) -> None:
    """Every framework's derived knobs, stage by stage, once everything written is a candidate."""
    for stage in Stage:
        for framework in FRAMEWORKS:
            framework.derive(stage, candidates, context)


def recipe_framework(values: Mapping[str, Setting]) -> Framework:
    """Whose recipe a YAML file is: LLaMA-Factory v1's when it names its micro-batch and length keys (which the
    other two split between them), axolotl's when it names keys only axolotl reads, LLaMA-Factory's when it
    names keys only LLaMA-Factory reads, else a file of plain HF arguments (alignment-handbook's and TRL's
    recipes): LLaMA-Factory's defaults (LoRA, checkpointing on) would misread a full fine-tune there."""
    if writes_llamafactory_v1_recipe(values):
        return LLAMAFACTORY_V1
    if writes_recipe(values):
        return AXOLOTL
    return LLAMAFACTORY if writes_llamafactory_recipe(values) else HF_ARGUMENTS
