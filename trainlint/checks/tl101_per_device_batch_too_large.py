from __future__ import annotations

from typing import Iterable, List, Optional

from trainlint.checks._conditions import known_int
from trainlint.checks._examples import ZERO2, job
from trainlint.checks._memory import (
    estimate_for,
    fitting_batch,
    gpu_label,
    grounded,
    over_capacity,
    verdict_severity,
    world_note,
)
from trainlint.checks.base import CheckContext, Example, Rule
from trainlint.core import Applicability, Finding, Fix, KnobChange, Related, Severity, TrainingRun

_FLAGS = """
--deepspeed zero2.json
--model_name_or_path lmsys/vicuna-7b-v1.5
--bf16 True
--per_device_train_batch_size {batch}
--gradient_accumulation_steps {accum}
--gradient_checkpointing True
--model_max_length 2048
"""


class PerDeviceBatchTooLarge(Rule):
    """
    ## What it does
    Estimates the per-GPU peak memory of the job (weights, gradients, optimizer states, activations,
    the fp32 logits of a micro-batch, overhead) and reports a per-device train batch whose peak
    exceeds the target GPU by more than the estimate's error (10%). The peak is that of a batch whose
    samples reach the sequence-length limit, the longest batch the run can meet.

    ## Why is this bad
    The job runs out of memory at the first step, after the model has loaded and the data has been
    prepared: minutes of a paid allocation lost, often more when the launcher is retried.

    ## Example
    ```sh
    deepspeed --num_gpus 8 train.py --deepspeed zero2.json --bf16 True \\
        --per_device_train_batch_size 16 --gradient_accumulation_steps 1 --model_max_length 2048
    ```
    Use instead (same effective batch: 16 × 1 × 8 = 4 × 4 × 8):
    ```sh
        --per_device_train_batch_size 4 --gradient_accumulation_steps 4
    ```

    ## Fix safety
    With `--preserve-effective-batch` the fix lowers the micro-batch to the largest size the memory
    model says fits and raises gradient accumulation so that per-device × accumulation × world size
    is unchanged: the optimizer sees the same batch, so the fix is safe. Without it, the fix only
    lowers the micro-batch, which shrinks the effective batch (and changes the learning dynamics):
    unsafe. When no whole accumulation keeps the product, the fix is display-only.
    """

    code = "TL101"
    name = "per-device-batch-too-large"
    severity = Severity.ERROR
    summary = "The per-device train batch does not fit the target GPU"
    examples = (
        Example("a 7B full fine-tune with micro-batch 16 on 40 GB cards",
                job(_FLAGS.format(batch=16, accum=1), extra={"zero2.json": ZERO2}), True,
                ("--gpu", "a100-40gb")),
        Example("micro-batch 16 with auto_find_batch_size: the trainer lowers it itself",
                job(_FLAGS.format(batch=16, accum=1) + "--auto_find_batch_size True",
                    extra={"zero2.json": ZERO2}), False, ("--gpu", "a100-40gb")),
        Example("the same recipe with micro-batch 1 and accumulation 16",
                job(_FLAGS.format(batch=1, accum=16), extra={"zero2.json": ZERO2}), False,
                ("--gpu", "a100-80gb")),
    )

    def check(self, run: TrainingRun, ctx: CheckContext) -> Iterable[Finding]:
        batch = known_int(run, "per_device_train_batch_size")
        if batch is None or batch < 2 or not grounded(run):
            # A micro-batch of 1 has nothing to lower: TL106 and TL108 say what else is too large.
            return
        if run.known("auto_find_batch_size") is True:
            return  # the trainer halves the batch itself after an out-of-memory error
        current = estimate_for(run, ctx.gpu)
        if not over_capacity(current):
            return
        fits_at = fitting_batch(run, ctx.gpu, batch - 1) if batch > 1 else None
        message = (f"per_device_train_batch_size {batch} needs about {current.peak_gib:.1f} GiB per GPU "
                   f"({current.low_gib:.1f}–{current.high_gib:.1f}) on {gpu_label(ctx)} with "
                   f"{current.capacity_gib:.1f} GiB usable; the largest term is {current.largest_term} "
                   f"({current.breakdown.get(current.largest_term, 0):.1f} GiB), with every sample at the "
                   f"{known_int(run, 'max_seq_length')}-token limit{world_note(run)}")
        if fits_at is not None:
            smaller = estimate_for(run, ctx.gpu, per_device_train_batch_size=fits_at)
            message += f"; {fits_at} fits ({smaller.peak_gib:.1f} GiB)"
        else:
            message += "; even a micro-batch of 1 does not fit (see the memory breakdown: `trainlint estimate`)"
        related: List[Related] = []
        accum_setting = run.setting("gradient_accumulation_steps")
        if accum_setting is not None and accum_setting.origin is not None:
            related.append(Related(accum_setting.origin, "gradient accumulation is set here"))
        yield self.finding(run, message, severity=verdict_severity(ctx, self.severity),
                           at=run.setting("per_device_train_batch_size"), related=related,
                           fix=self._fix(run, ctx, batch, fits_at))

    def _fix(self, run: TrainingRun, ctx: CheckContext, batch: int, fits_at: Optional[int]) -> Optional[Fix]:
        if fits_at is None:
            return None
        accum = known_int(run, "gradient_accumulation_steps")
        if run.setting("global_batch_size") is not None:
            return Fix(Applicability.SAFE,
                       f"lower the micro-batch to {fits_at}; the entry script derives accumulation from the global batch",
                       (KnobChange("per_device_train_batch_size", batch, fits_at),))
        if not ctx.preserve_effective_batch:
            return Fix(Applicability.UNSAFE,
                       f"lower the micro-batch to {fits_at} (this shrinks the effective batch; "
                       f"--preserve-effective-batch raises accumulation to keep it)",
                       (KnobChange("per_device_train_batch_size", batch, fits_at),))
        if accum is None:
            return Fix(Applicability.DISPLAY_ONLY,
                       f"lower the micro-batch to {fits_at} and raise gradient accumulation to keep the effective "
                       f"batch (accumulation is not known statically)")
        product = batch * accum
        for candidate in range(fits_at, 0, -1):
            if product % candidate == 0:
                new_accum = product // candidate
                changes = [KnobChange("per_device_train_batch_size", batch, candidate),
                           KnobChange("gradient_accumulation_steps", accum, new_accum)]
                if known_int(run, "ds_micro_batch") is not None:
                    changes.append(KnobChange("ds_micro_batch", run.value("ds_micro_batch"), "auto"))
                if known_int(run, "ds_gradient_accumulation_steps") is not None:
                    changes.append(KnobChange("ds_gradient_accumulation_steps",
                                              run.value("ds_gradient_accumulation_steps"), "auto"))
                world = known_int(run, "world_size")
                kept = (f"effective batch {batch}×{accum}×{world} = {candidate}×{new_accum}×{world} = {product * world}"
                        if world else f"per-device × accumulation {product} kept (world size unknown)")
                return Fix(Applicability.SAFE, f"micro-batch {candidate}, accumulation {new_accum}: {kept}",
                           tuple(changes))
        return None  # unreachable: a micro-batch of 1 always divides the product
