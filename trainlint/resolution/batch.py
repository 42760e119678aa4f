"""The effective batch of a run: what the optimizer sees per step, summed over every GPU."""
from __future__ import annotations

import math
from typing import Optional, Tuple

from trainlint.core import TrainingRun, Unknown, Value
from trainlint.knobs import K
from trainlint.resolution.frameworks.memory_features import NO_TRAINING_STEP

BATCH_FACTORS = (K.PER_DEVICE_TRAIN_BATCH_SIZE, K.GRADIENT_ACCUMULATION_STEPS, K.WORLD_SIZE)


def _as_count(value: Value) -> Optional[int]:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return None


def _factor(run: TrainingRun, knob: str) -> Tuple[Optional[int], str]:
    setting = run.setting(knob)
    if setting is None:
        return None, f"{knob} is not set"
    if isinstance(setting.value, Unknown):
        return None, f"{knob} is unknown: {setting.value.reason}"
    count = _as_count(setting.value)
    if count is None:
        return None, f"{knob} is not a whole number ({setting.value!r})"
    return count, ""


def effective_batch(run: TrainingRun) -> Value:
    """per-device batch × accumulation × world size (× the entry script's data multiplier), or
    Unknown saying which factor is missing; Unknown for a launch that takes no training step, which has none."""
    if run.known(NO_TRAINING_STEP) is True:
        return Unknown("the launch takes no training step")
    product = 1
    for knob in BATCH_FACTORS:
        count, reason = _factor(run, knob)
        if count is None:
            return Unknown(reason)
        product *= count
    multiplier = run.facts.batch_multiplier
    if multiplier is not None:
        if isinstance(multiplier.value, Unknown):
            return Unknown(f"the batch multiplier is unknown: {multiplier.value.reason}")
        count = _as_count(multiplier.value)
        if count is None:
            return Unknown(f"the batch multiplier is not a whole number ({multiplier.value!r})")
        product *= count
    return product
