"""LLaMA-Factory's v1 trainer (`USE_V1=1 llamafactory-cli train recipe.yaml`): recipes of its own argument classes
(`micro_batch_size`, `cutoff_len`, `model`, and plugin sections such as `dist_config` and `peft_config`), read by a
trainer that is not HF's. Its defaults differ from TrainingArguments' (bf16 and activation checkpointing on) and its
plugins (FSDP2, DeepSpeed, kernels, quantization) shard and fuse in their own ways, none of which trainlint models:
only the keys that mean what HF's do are read (trainlint.knobs' LLAMAFACTORY_V1 spellings: the micro-batch, the
length, the model, the steps), nothing else is assumed, and the memory model stays out. Its `bf16` is no
TrainingArguments field: the trainer picks another precision where the GPU has none."""
from __future__ import annotations

from typing import Mapping

from trainlint.core import Launcher, Setting, SourceKind
from trainlint.knobs import LLAMAFACTORY_V1 as SPELLING
from trainlint.resolution.frameworks.base import Framework
from trainlint.resolution.frameworks.memory_features import add_out_of_scope
from trainlint.resolution.precedence import Candidates

# Top-level keys only v1's argument classes define (src/llamafactory/v1/config/*_args.py): axolotl and LLaMA-Factory's
# first trainer have none of them.
_OWN_SECTIONS = frozenset({"dist_config", "kernel_config", "model_class"})

UNMODELLED = "LLaMA-Factory's v1 trainer: its defaults and plugins are not modelled"


def writes_recipe(values: Mapping[str, Setting]) -> bool:
    """A v1 recipe: `micro_batch_size` with LLaMA-Factory's `cutoff_len` or one of v1's own sections. axolotl spells
    the micro-batch the same way but the length `sequence_len`, and has no such sections."""
    roots = {key.split(".", 1)[0] for key in values}
    return "micro_batch_size" in roots and "base_model" not in roots and bool(roots & (_OWN_SECTIONS | {"cutoff_len"}))


def _defaults(written: Mapping[str, Setting], candidates: Candidates) -> None:
    add_out_of_scope(candidates, Setting(UNMODELLED, SourceKind.FRAMEWORK_DEFAULT, note=UNMODELLED), UNMODELLED)


LLAMAFACTORY_V1 = Framework(
    name="llamafactory-v1",
    namespace=SPELLING,
    defaults=_defaults,
    launcher=Launcher.LLAMAFACTORY_CLI,
)
