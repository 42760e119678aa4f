from __future__ import annotations

from typing import Iterable

from trainlint.checks._conditions import known_bool
from trainlint.checks._examples import job
from trainlint.checks.base import CheckContext, Example, Rule
from trainlint.core import RECIPE_LAUNCHERS, Applicability, Finding, Fix, KnobChange, Launcher, Severity, TrainingRun
from trainlint.knobs import K


class Bf16UnsupportedGpu(Rule):
    """
    ## What it does
    Reports bf16 turned on (in the trainer or the DeepSpeed config) when the target GPU, named with
    `--gpu`, has no bf16 support (V100, T4 and other pre-Ampere cards).

    ## Why is this bad
    The trainer stops at start-up ("bf16 requires Ampere or newer"), or, where it runs, it emulates
    bf16 slowly. This is how the V100 launchers of several repositories differ from their A100 ones.

    ## Example
    ```sh
    deepspeed train.py --bf16 True      # on V100-32GB
    ```
    Use instead:
    ```sh
    deepspeed train.py --fp16 True
    ```

    ## Fix safety
    Unsafe: fp16 has a narrower range than bf16 and relies on loss scaling; the run's numerics change.
    """

    code = "TL203"
    name = "bf16-unsupported-gpu"
    severity = Severity.ERROR
    summary = "bf16 on a GPU without bf16 support"
    examples = (
        Example("bf16 on V100", job("--bf16 True"), True, ("--gpu", "v100-32gb"), at="finetune.sh:3:12"),
        Example("fp16 on V100", job("--fp16 True"), False, ("--gpu", "v100-32gb")),
        Example("bf16 on A100", job("--bf16 True"), False, ("--gpu", "a100-80gb")),
        # MoE-LLaVA keeps LLaVA's launchers, whose `llava/train/train_mem.py` it does not ship.
        Example("bf16 for an entry script the tree does not hold, on V100",
                {"finetune.sh": "deepspeed --num_gpus 8 llava/train/train_mem.py --bf16 True\n"}, False,
                ("--gpu", "v100-32gb")),
    )

    def check(self, run: TrainingRun, ctx: CheckContext) -> Iterable[Finding]:
        if ctx.gpu_assumed or ctx.gpu.bf16:
            return
        # A launch flag means what the entry script's parser makes of it: one not read (missing, outside the tree) may
        # not take `--bf16` as a precision at all. A recipe's key is its framework's, a DeepSpeed config's DeepSpeed's.
        # ms-swift's commands are read by its own flags' table.
        read = run.facts.entry_exists is True or run.launcher in RECIPE_LAUNCHERS or run.launcher == Launcher.SWIFT
        trainer_bf16 = known_bool(run, K.BF16) if read else None
        ds_bf16 = known_bool(run, K.DS_BF16)
        if not trainer_bf16 and not ds_bf16:
            return
        knob = K.BF16 if trainer_bf16 else K.DS_BF16
        changes = (KnobChange(knob, True, False), KnobChange(K.FP16 if knob == K.BF16 else K.DS_FP16, False, True))
        message = f"bf16 is on but {ctx.gpu.name} has no bf16 support; use fp16"
        yield self.finding(run, message, at=run.setting(knob),
                           fix=Fix(Applicability.UNSAFE, "train in fp16 instead of bf16", changes))
