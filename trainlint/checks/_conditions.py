"""Questions several rules ask of a run: does evaluation run, how often, which precision is on."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

from trainlint.core import Setting, SourceKind, TrainingRun, Unknown
from trainlint.knobs import K
from trainlint.resolution.evaluation import EvalVerdict, evaluation_runs  # noqa: F401 (shared)


@dataclass(frozen=True)
class EvalInterval:
    steps: Optional[int]
    setting: Optional[Setting]  # where the interval is written (eval_steps, or logging_steps it falls back to)
    description: str


def eval_interval(run: TrainingRun) -> EvalInterval:
    """How many optimizer steps pass between evaluations under the "steps" strategy.
    HF evaluates every `logging_steps` when `eval_steps` is unset; a value below 1 is a ratio."""
    eval_steps = run.setting(K.EVAL_STEPS)
    source = eval_steps if eval_steps is not None and eval_steps.value is not None else run.setting(K.LOGGING_STEPS)
    if source is None:
        return EvalInterval(None, None, "eval_steps is not set")
    value = source.value
    name = "eval_steps" if source is eval_steps else "logging_steps (eval_steps is unset)"
    if isinstance(value, Unknown) or value is None or isinstance(value, bool):
        return EvalInterval(None, source, f"{name} is not known")
    if 0 < value < 1:
        total = run.known(K.MAX_STEPS)
        if isinstance(total, int) and total > 0:
            return EvalInterval(max(1, int(total * value)), source, f"{name} = {value} of {total} steps")
        return EvalInterval(None, source, f"{name} = {value} of an unknown number of steps")
    return EvalInterval(int(value), source, f"{name} = {int(value)}")


def known_int(run: TrainingRun, knob: str) -> Optional[int]:
    value = run.known(knob)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def known_bool(run: TrainingRun, knob: str) -> Optional[bool]:
    value = run.known(knob)
    return value if isinstance(value, bool) else None


def is_user_set(setting: Optional[Setting]) -> bool:
    """Written somewhere in the user's files (not a framework default or an assumption)."""
    return setting is not None and setting.kind not in (SourceKind.FRAMEWORK_DEFAULT, SourceKind.ASSUMED)


def precision(run: TrainingRun) -> Tuple[Optional[bool], Optional[bool]]:
    """(bf16 on, fp16 on) as the job runs: the trainer's flags, or DeepSpeed's when it pins them."""
    bf16 = known_bool(run, K.BF16)
    fp16 = known_bool(run, K.FP16)
    ds_bf16 = run.known(K.DS_BF16)
    ds_fp16 = run.known(K.DS_FP16)
    if ds_bf16 is True:
        bf16 = True
    if ds_fp16 is True:
        fp16 = True
    return bf16, fp16

