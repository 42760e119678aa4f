"""The DeepSpeed config's batch keys beside the trainer's: who fills them, and what they become when a fix changes
the trainer's micro-batch or accumulation."""
from __future__ import annotations

from typing import List, Optional

from trainlint.core import KnobChange, Launcher, TrainingRun
from trainlint.knobs import K

# How deepspeed.add_config_arguments spells the config path: DeepSpeed's own flag, not TrainingArguments'.
DEEPSPEED_OWN_CONFIG_FLAG = "deepspeed_config"


def trainer_fills_deepspeed(run: TrainingRun) -> bool:
    """Whether the HF Trainer integration hands its values to DeepSpeed (and fills "auto"): the config is named
    through TrainingArguments' `deepspeed` (a flag HF's dataclass brings, or a recipe key of a framework built on
    the Trainer). A script that names it with DeepSpeed's own `--deepspeed_config`, defines `--deepspeed` itself, or
    trains with a loop of its own (a trainer class that is no HF Trainer) calls deepspeed.initialize directly:
    DeepSpeed then reads the config's own keys, and rejects "auto"."""
    setting = run.setting(K.DEEPSPEED)
    if setting is None or (setting.written_as or "").lstrip("-") == DEEPSPEED_OWN_CONFIG_FLAG:
        return False
    return "deepspeed" not in run.facts.own_flags and not run.facts.own_loop_trainer


def auto_is_filled(run: TrainingRun) -> bool:
    """Whether "auto" in the config is certain to be filled: HF's integration runs, and the script that reads the
    arguments is in view (a file of arguments checked by itself may be read by a loop of its own). Numbers equal to
    the trainer's are accepted either way."""
    return trainer_fills_deepspeed(run) and run.launcher != Launcher.ARGUMENTS_FILE


def batch_key_changes(run: TrainingRun, micro: Optional[int], accumulation: Optional[int]) -> List[KnobChange]:
    """The changes that keep the config's pinned batch keys in step with a trainer now at `micro` × `accumulation`:
    "auto" where HF's integration is certain to fill them from the trainer, else the values themselves (None:
    unchanged)."""
    fills = auto_is_filled(run)
    changes = []
    for knob, new in ((K.DS_MICRO_BATCH, micro), (K.DS_GRADIENT_ACCUMULATION_STEPS, accumulation)):
        old = run.value(knob)
        if not isinstance(old, int) or isinstance(old, bool):
            continue
        value = "auto" if fills else new
        if value is not None and value != old:
            changes.append(KnobChange(knob, old, value))
    return changes
