"""Whether a job evaluates at all: the one answer the rules and the memory model share."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from trainlint.core import TrainingRun, Unknown
from trainlint.knobs import K


@dataclass(frozen=True)
class EvalVerdict:
    runs: Optional[bool]  # None: cannot be told statically
    reason: str


def evaluation_runs(run: TrainingRun) -> EvalVerdict:
    """Evaluation only costs memory when it happens: a strategy other than "no" and an eval dataset."""
    strategy = run.value(K.EVAL_STRATEGY, "no")
    if isinstance(strategy, Unknown):
        return EvalVerdict(None, f"the eval strategy is {strategy}")
    if strategy in (None, "no", "none"):
        return EvalVerdict(False, "eval_strategy is \"no\"")
    if run.facts.eval_dataset is False:
        return EvalVerdict(False, "the trainer is given eval_dataset=None")
    return EvalVerdict(True, f"eval_strategy is \"{strategy}\"")
