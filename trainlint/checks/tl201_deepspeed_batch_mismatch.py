from __future__ import annotations

from typing import Iterable, List

from trainlint.checks._conditions import known_int
from trainlint.checks._deepspeed_keys import auto_is_filled, trainer_fills_deepspeed
from trainlint.checks._examples import job
from trainlint.checks.base import CheckContext, Example, Rule
from trainlint.core import Applicability, Finding, Fix, KnobChange, Launcher, Related, Severity, TrainingRun
from trainlint.knobs import K

_PINNED = ('{"train_micro_batch_size_per_gpu": 16, "gradient_accumulation_steps": 1, '
           '"zero_optimization": {"stage": 2}}\n')
_AUTO = ('{"train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto", '
         '"zero_optimization": {"stage": 2}}\n')
_FLAGS = "--deepspeed ds.json\n--per_device_train_batch_size 4\n--gradient_accumulation_steps 4"

# (DeepSpeed key knob, trainer knob)
_MICRO_BATCH = (K.DS_MICRO_BATCH, K.PER_DEVICE_TRAIN_BATCH_SIZE)
_ACCUMULATION = (K.DS_GRADIENT_ACCUMULATION_STEPS, K.GRADIENT_ACCUMULATION_STEPS)


class DeepspeedBatchMismatch(Rule):
    """
    ## What it does
    Compares the batch keys a DeepSpeed config pins (`train_micro_batch_size_per_gpu`,
    `gradient_accumulation_steps`, `train_batch_size`) with the trainer's settings, and checks that
    `train_batch_size = micro-batch × accumulation × world size`. It stays quiet for a job trained by a
    class of the repository's own that is no HF Trainer: what that loop takes from the config is its code's.
    A file of arguments checked by itself gets a warning: the script that reads it is not in view.

    ## Why is this bad
    The HF integration refuses to start when a pinned key disagrees with the trainer; outside it,
    DeepSpeed trusts its own keys, so the batch the launcher shows is not the batch that runs, and
    lowering the micro-batch in the launcher to fit memory changes nothing.

    ## Example
    ```json
    {"train_micro_batch_size_per_gpu": 16, "gradient_accumulation_steps": 1}
    ```
    with `--per_device_train_batch_size 4 --gradient_accumulation_steps 4`. Use instead:
    ```json
    {"train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto", "train_batch_size": "auto"}
    ```

    ## Fix safety
    Safe: `"auto"` makes DeepSpeed take the trainer's values, which are the ones the launcher states.
    Outside HF's integration (or when the script that reads a file of arguments is not in view)
    `"auto"` may be rejected: the fix writes the trainer's values themselves, and is unsafe (which
    of the disagreeing values was meant is not told).
    """

    code = "TL201"
    name = "deepspeed-batch-mismatch"
    severity = Severity.ERROR
    summary = "DeepSpeed batch keys disagree with the trainer's"
    examples = (
        Example("DeepSpeed pins micro-batch 16 while the launcher says 4", job(_FLAGS, extra={"ds.json": _PINNED}),
                True, at="ds.json:1:36", fixed={"ds.json": _AUTO}),
        Example("DeepSpeed batch keys are auto", job(_FLAGS, extra={"ds.json": _AUTO}), False),
    )

    def check(self, run: TrainingRun, ctx: CheckContext) -> Iterable[Finding]:
        if run.facts.own_loop_trainer:
            return  # a trainer of the repository's own, no HF Trainer: what it takes from the config is its code's
        changes: List[KnobChange] = []
        problems: List[str] = []
        related: List[Related] = []
        hf_integration = trainer_fills_deepspeed(run)
        auto = auto_is_filled(run)
        for ds_knob, trainer_knob in ((_MICRO_BATCH, _ACCUMULATION) if hf_integration else (_MICRO_BATCH,)):
            pinned, trainer = known_int(run, ds_knob), known_int(run, trainer_knob)
            if pinned is not None and trainer is not None and pinned != trainer:
                problems.append(f"{_key(run, ds_knob)} is {pinned} but {trainer_knob} is {trainer}")
                changes.append(KnobChange(ds_knob, pinned, "auto" if auto else trainer))
                trainer_setting = run.setting(trainer_knob)
                if trainer_setting is not None and trainer_setting.origin is not None:
                    related.append(Related(trainer_setting.origin, f"{trainer_knob} = {trainer} here"))
        total = known_int(run, K.DS_TRAIN_BATCH_SIZE)
        micro = known_int(run, K.DS_MICRO_BATCH) or known_int(run, K.PER_DEVICE_TRAIN_BATCH_SIZE)
        accum = known_int(run, K.DS_GRADIENT_ACCUMULATION_STEPS)
        if accum is None and hf_integration:
            accum = known_int(run, K.GRADIENT_ACCUMULATION_STEPS)
        world = known_int(run, K.WORLD_SIZE)
        product = micro * accum * world if micro and accum and world else None
        if total is not None and product is not None and total != product:
            problems.append(f"train_batch_size is {total} but micro-batch × accumulation × world size is "
                            f"{micro}×{accum}×{world} = {product}")
            changes.append(KnobChange(K.DS_TRAIN_BATCH_SIZE, total, "auto" if auto else product))
        if not problems:
            return
        first = changes[0].knob
        if auto:
            fix = Fix(Applicability.SAFE, "let DeepSpeed take the trainer's values (\"auto\")", tuple(changes))
        else:
            # DeepSpeed called by the script itself rejects "auto"; which disagreeing value was meant is not told.
            fix = Fix(Applicability.UNSAFE, "write the trainer's values into the DeepSpeed config", tuple(changes))
        message, severity = "; ".join(problems), None
        if run.launcher == Launcher.ARGUMENTS_FILE:
            # The script that reads the file is not in view: HF's Trainer refuses the config, a loop of its own may not.
            message += " (the script that reads this file is not in view: HF's Trainer refuses such a config)"
            severity = Severity.WARNING
        yield self.finding(run, message, at=run.setting(first), related=related, fix=fix, severity=severity)


def _key(run: TrainingRun, knob: str) -> str:
    """The key as the DeepSpeed config spells it."""
    setting = run.setting(knob)
    return setting.written_as if setting is not None and setting.written_as else knob
