from __future__ import annotations

from typing import Iterable

from trainlint.checks._conditions import known_int
from trainlint.checks._examples import ZERO2, job
from trainlint.checks._memory import (
    OVER_CAPACITY_MARGIN,
    data_dependent_length,
    grounded,
    over_capacity,
    training_estimate,
)
from trainlint.checks.base import CheckContext, Example, Rule
from trainlint.checks.tl111_job_exceeds_gpu import owned_by_knob_rule, whole_step_report
from trainlint.core import Finding, Severity, TrainingRun
from trainlint.knobs import K

_FLAGS = """
--deepspeed zero2.json
--model_name_or_path lmsys/vicuna-7b-v1.5
--bf16 True
--per_device_train_batch_size 1
--gradient_checkpointing True
--model_max_length 2048
"""
_LAUNCHER = "deepspeed --num_gpus 4"


class JobAtGpuCapacity(Rule):
    """
    ## What it does
    Reports a job whose estimated peak per GPU is above the GPU's usable memory, but by less than the
    estimate's error (10%), so that the estimate alone cannot say it fails: TL101, TL106 and TL111 speak only
    past that margin. It names the largest terms of the estimate and the changes that would leave room.

    It needs the grounding of the other memory rules (a known model, micro-batch and sequence length), and
    judges a job whose sharding or GPU count it cannot read at the least any value leaves on each GPU, as
    TL111 does. It is silent when a rule about one setting already reports the job, and when a batch of shorter
    rows would fit (no packing): the overflow then rests on both the estimate's error and the data.

    ## Why is this bad
    Over the published measurements the estimate is about as often above the measured peak as below it
    (benchmarks/memory_accuracy.py), so a job estimated above the card is more likely than not to run out of
    memory at its first steps, and one that does start has no headroom left for the fragmentation the caching
    allocator builds up over a run.

    ## Example
    ```sh
    deepspeed --num_gpus 4 train.py --deepspeed zero2.json --model_name_or_path lmsys/vicuna-7b-v1.5 \\
        --bf16 True --per_device_train_batch_size 1 --gradient_checkpointing True --model_max_length 2048
    ```
    On four 48 GB L40S cards, ZeRO-2 keeps every 16-bit weight on each GPU and a quarter of the fp32 optimizer
    states: about 47.6 GiB of the 44.4 the card leaves usable. Use instead ZeRO-3, or offload the optimizer.

    ## Fix safety
    `trainlint fix` applies the job's port plan (docs/planner.md): safe when it keeps what is trained and the
    global batch, unsafe when it does not. Otherwise display-only.
    """

    code = "TL113"
    name = "job-at-gpu-capacity"
    severity = Severity.WARNING
    summary = "The training step needs about as much memory as the GPU holds, within the estimate's error"
    examples = (
        Example("a 7B full fine-tune at micro-batch 1 with ZeRO-2 on four 48 GB L40S cards: the port plan is ZeRO-3",
                job(_FLAGS, _LAUNCHER, extra={"zero2.json": ZERO2}), True, ("--gpu", "l40s"), at="finetune.sh:4:26",
                fixed={"zero2.json": ZERO2.replace('"stage": 2', '"stage": 3')}),
        Example("the same job on 80 GB cards",
                job(_FLAGS, _LAUNCHER, extra={"zero2.json": ZERO2}), False, ("--gpu", "a100-80gb")),
        Example("the same job on eight cards, over which ZeRO-2 spreads the optimizer states thinner",
                job(_FLAGS, "deepspeed --num_gpus 8", extra={"zero2.json": ZERO2}), False, ("--gpu", "l40s")),
        Example("the same job on 32 GB V100s, where the model states alone overflow: TL108 reports it",
                job(_FLAGS, _LAUNCHER, extra={"zero2.json": ZERO2}), False, ("--gpu", "v100-32gb")),
        Example("a 7B job at micro-batch 2 and 4096 tokens on 24 GB cards, over only for the longest batches: "
                "within the estimate's error that depends on the data, and is left to the data",
                job(_FLAGS.replace("batch_size 1", "batch_size 2").replace("2048", "4096")
                    .replace("zero2.json", "zero3.json"), "deepspeed --num_gpus 8",
                    extra={"zero3.json": ZERO2.replace('"stage": 2', '"stage": 3')}), False, ("--gpu", "rtx4090")),
    )

    def check(self, run: TrainingRun, ctx: CheckContext) -> Iterable[Finding]:
        if not grounded(run, any_world=True, any_sharding=True):
            return
        current = training_estimate(run, ctx.gpu)
        if current.peak_gib <= current.capacity_gib or over_capacity(current) or owned_by_knob_rule(run, ctx):
            return
        batch = known_int(run, K.PER_DEVICE_TRAIN_BATCH_SIZE) or 1
        if data_dependent_length(run, ctx.gpu, batch, current) is not None:
            # Within the estimate's error and only for batches of the longest rows: two uncertainties, no verdict.
            return
        message, fix = whole_step_report(run, ctx, current, f": over the card by less than the estimate's "
                                                            f"{OVER_CAPACITY_MARGIN:.0%} error, so it may run out "
                                                            f"of memory")
        # As TL111's: the sum of every term is near the card, so the finding sits on the model the terms follow.
        yield self.finding(run, message, at=run.setting(K.MODEL_NAME_OR_PATH)
                           or run.setting(K.PER_DEVICE_TRAIN_BATCH_SIZE), fix=fix)
