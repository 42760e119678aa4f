from __future__ import annotations

from typing import Iterable, List, Tuple

from trainlint.checks._conditions import known_bool
from trainlint.checks._examples import job
from trainlint.checks.base import CheckContext, Example, Rule
from trainlint.core import Applicability, Finding, Fix, KnobChange, Related, Severity, TrainingRun
from trainlint.knobs import K

_FP16_ON = '{"fp16": {"enabled": true}, "zero_optimization": {"stage": 2}}\n'
_AUTO = '{"fp16": {"enabled": "auto"}, "bf16": {"enabled": "auto"}, "zero_optimization": {"stage": 2}}\n'
# (DeepSpeed precision knob, the trainer's flag it must agree with)
_PAIRS = ((K.DS_BF16, K.BF16), (K.DS_FP16, K.FP16))


class PrecisionMismatch(Rule):
    """
    ## What it does
    Reports bf16/fp16 settings that disagree between the DeepSpeed config and the trainer, and a
    trainer with both bf16 and fp16 on. It stays quiet for a job trained by a class of the
    repository's own that is no HF Trainer, whose precision is what its code takes from the config.

    ## Why is this bad
    The HF integration stops with a mismatch error, or, outside it, the engine trains in a precision
    the launcher does not show: fp16 where bf16 was meant overflows on large activations, and memory
    estimates made for one precision do not hold for the other.

    ## Example
    ```json
    {"fp16": {"enabled": true}}
    ```
    with `--bf16 True`. Use instead `{"fp16": {"enabled": "auto"}, "bf16": {"enabled": "auto"}}`.

    ## Fix safety
    Safe: `"auto"` makes DeepSpeed follow the trainer's flags, the precision the launcher states.
    """

    code = "TL202"
    name = "precision-mismatch"
    severity = Severity.ERROR
    summary = "bf16/fp16 disagree between DeepSpeed and the trainer, or both are on"
    examples = (
        Example("DeepSpeed fp16 on while the launcher asks for bf16",
                job("--deepspeed ds.json\n--bf16 True", extra={"ds.json": _FP16_ON}), True, at="ds.json:1:22",
                fixed={"ds.json": _FP16_ON.replace("true", '"auto"')}),
        Example("DeepSpeed precision on auto", job("--deepspeed ds.json\n--bf16 True", extra={"ds.json": _AUTO}),
                False),
        Example("both bf16 and fp16 on the command line", job("--bf16 True\n--fp16 True"), True,
                at="finetune.sh:4:12"),
    )

    def check(self, run: TrainingRun, ctx: CheckContext) -> Iterable[Finding]:
        bf16, fp16 = known_bool(run, K.BF16), known_bool(run, K.FP16)
        if bf16 and fp16:
            yield self.finding(run, "both bf16 and fp16 are on; the trainer refuses to start",
                               at=run.setting(K.FP16),
                               related=_related(run, K.BF16),
                               fix=Fix(Applicability.UNSAFE, "keep bf16, turn fp16 off",
                                       (KnobChange(K.FP16, True, False),)))
            return
        if run.facts.own_loop_trainer:
            return  # no HF Trainer to compare the config with: the repository's own trainer uses it as its code says
        problems: List[str] = []
        changes: List[KnobChange] = []
        for ds_knob, trainer_knob in _PAIRS:
            pinned, trainer = known_bool(run, ds_knob), known_bool(run, trainer_knob)
            if pinned is None or trainer is None or pinned == trainer:
                continue
            problems.append(f"DeepSpeed {trainer_knob}.enabled is {str(pinned).lower()} but the trainer's "
                            f"{trainer_knob} is {trainer}")
            changes.append(KnobChange(ds_knob, pinned, "auto"))
        if not problems:
            return
        first_ds_knob, first_trainer_knob = next(pair for pair in _PAIRS if pair[0] == changes[0].knob)
        fix = Fix(Applicability.SAFE, "let DeepSpeed follow the trainer's precision (\"auto\")", tuple(changes))
        yield self.finding(run, "; ".join(problems), at=run.setting(first_ds_knob),
                           related=_related(run, first_trainer_knob), fix=fix)


def _related(run: TrainingRun, knob: str) -> Tuple[Related, ...]:
    setting = run.setting(knob)
    if setting is not None and setting.origin is not None:
        return (Related(setting.origin, f"{knob} = {setting.value} here"),)
    return ()
