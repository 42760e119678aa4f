from __future__ import annotations

from typing import Iterable

from trainlint.checks._examples import job
from trainlint.checks.base import CheckContext, Example, Rule
from trainlint.core import Finding, Severity, TrainingRun, Unknown
from trainlint.knobs import K
from trainlint.resolution.world import UnknownNodes


class WorldSizeUnknown(Rule):
    """
    ## What it does
    Says when the number of training processes cannot be read from the launcher (`deepspeed`
    without `--num_gpus`, `$(nvidia-smi ... | wc -l)`, a variable from the environment), and which
    assumption the memory estimates and the effective batch used instead. Once the world size is
    answered (`--num-gpus N`, or `num-gpus = N` in the configuration) it says nothing.

    The terminal reports fold these findings into one line per scan (how many jobs, and the setting
    that answers it); `--show-info` or `--select TL301` lists them one by one, and the JSON and
    SARIF outputs always carry them.

    ## Why is this bad
    ZeRO shards model states over the world size, and the effective batch is a multiple of it: both
    are guesses until the world size is known. Pass `--num-gpus N` to state it.

    ## Example
    ```sh
    deepspeed train.py --per_device_train_batch_size 4
    ```
    Use instead `deepspeed --num_gpus 8 train.py ...` (or run `trainlint check --num-gpus 8`).

    ## Fix safety
    No fix: the world size is a fact about the machine, not a setting to rewrite.
    """

    code = "TL301"
    name = "world-size-unknown"
    severity = Severity.INFO
    summary = "The world size cannot be resolved statically"
    answered_by = "`--num-gpus N`, or `num-gpus = N` in the configuration"
    examples = (
        Example("bare deepspeed uses every visible GPU", job("--per_device_train_batch_size 4", launcher="deepspeed"),
                True, at="finetune.sh:2:1"),
        Example("deepspeed --num_gpus 8", job("--per_device_train_batch_size 4"), False),
        Example("bare deepspeed, answered with --num-gpus 8",
                job("--per_device_train_batch_size 4", launcher="deepspeed"), False, ("--num-gpus", "8")),
    )

    def check(self, run: TrainingRun, ctx: CheckContext) -> Iterable[Finding]:
        world = run.setting(K.WORLD_SIZE)
        # A world size from --num-gpus / num-gpus is the user's answer: nothing left to say.
        if world is None or not isinstance(world.value, Unknown):
            return
        message = (f"the world size is not known statically ({world.value.reason}); memory estimates assume "
                   f"one GPU (no ZeRO sharding), memory rules that depend on sharding stay quiet, and the "
                   f"effective batch is unknown; "
                   + ("the launch spans that many machines, so --num-gpus (one machine's GPUs) does not answer it"
                      if isinstance(world.value, UnknownNodes) else "pass --num-gpus N"))
        yield self.finding(run, message, origin=run.origin)
