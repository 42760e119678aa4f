from __future__ import annotations

from typing import Iterable

from trainlint.checks._examples import job
from trainlint.checks.base import CheckContext, Example, Rule
from trainlint.core import Finding, Severity, SourceKind, TrainingRun, Unknown


class WorldSizeUnknown(Rule):
    """
    ## What it does
    Says when the number of training processes cannot be read from the launcher (`deepspeed`
    without `--num_gpus`, `$(nvidia-smi ... | wc -l)`, a variable from the environment), and which
    assumption the memory estimates and the effective batch used instead.

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
    examples = (
        Example("bare deepspeed uses every visible GPU", job("--per_device_train_batch_size 4", launcher="deepspeed"),
                True),
        Example("deepspeed --num_gpus 8", job("--per_device_train_batch_size 4"), False),
    )

    def check(self, run: TrainingRun, ctx: CheckContext) -> Iterable[Finding]:
        world = run.setting("world_size")
        if world is None:
            return
        if world.kind == SourceKind.ASSUMED:
            reason = world.via[0].value.reason if world.via and isinstance(world.via[0].value, Unknown) else ""
            message = f"the world size is not known statically ({reason}); assumed {world.value} from --num-gpus"
        elif isinstance(world.value, Unknown):
            message = (f"the world size is not known statically ({world.value.reason}); memory estimates assume "
                       f"one GPU (no ZeRO sharding), memory rules that depend on sharding stay quiet, and the "
                       f"effective batch is unknown; pass --num-gpus N")
        else:
            return
        yield self.finding(run, message, origin=run.origin)
