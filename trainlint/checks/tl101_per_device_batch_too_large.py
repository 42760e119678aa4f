from __future__ import annotations

from typing import Iterable, List, Optional

from trainlint.checks._conditions import known_int
from trainlint.checks._deepspeed_keys import batch_key_changes
from trainlint.checks._examples import ZERO2, job
from trainlint.checks._memory import (
    LONG_ROWS_NOTE,
    assumption_note,
    data_dependent_length,
    fitting_batch,
    grounded,
    on_gpu,
    over_capacity,
    states_exceed_gpu,
    training_estimate,
    verdict_severity,
)
from trainlint.checks.base import CheckContext, Example, Rule
from trainlint.core import Applicability, Finding, Fix, KnobChange, Related, Severity, TrainingRun
from trainlint.knobs import K
from trainlint.memory import split_keeping_product

_FLAGS = """
--deepspeed zero2.json
--model_name_or_path lmsys/vicuna-7b-v1.5
--bf16 True
--per_device_train_batch_size {batch}
--gradient_accumulation_steps {accum}
--gradient_checkpointing True
--model_max_length 2048
"""
_EVAL_FLAGS = "--per_device_eval_batch_size 8\n--eval_strategy steps\n--eval_steps 1000\n"
_WITH_METRICS = "eval_set, compute_metrics=compute_accuracy"


# LLaVA's scripts/zero2.json: the HF integration fills the "auto" gradient bucket with hidden² elements.
_ZERO2 = ZERO2.replace('"stage": 2,', '"stage": 2, "overlap_comm": true, "reduce_bucket_size": "auto",')

class PerDeviceBatchTooLarge(Rule):
    """
    ## What it does
    Estimates the per-GPU peak memory of the job (weights, gradients, optimizer states, activations,
    the fp32 logits of a micro-batch, overhead) and reports a per-device train batch whose peak
    exceeds the target GPU by more than the estimate's error (10%). The peak is that of a batch whose
    samples reach the sequence-length limit, the longest batch the run can meet.

    It stays quiet when the trainer finds the batch itself (`auto_find_batch_size`), when the
    micro-batch is already 1 or the model states alone exceed the GPU (TL106 and TL108 say what else
    is too large), and when the model, the micro-batch, the sequence length, the ZeRO stage or (under
    ZeRO) the world size cannot be read. It judges the training step; the eval pass has rules of its
    own (TL103, TL107). An overflow that a shorter row avoids is a warning: collators pad a batch to its
    longest sample, so whether any batch is that long depends on the data; with packing (`packing`,
    axolotl's `sample_packing`) every row is as long as the limit, and the verdict is an error.

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
    `trainlint fix` applies the job's port plan when one fits (docs/planner.md): the fastest
    combination of micro-batch and accumulation, checkpointing, ZeRO-3 and offload, shown by
    `trainlint estimate`. The single change below is what the finding proposes on its own.
    With `--preserve-effective-batch` the fix lowers the micro-batch to the largest size the memory
    model says fits and raises gradient accumulation so that per-device × accumulation × world size
    is unchanged: the optimizer sees the same batch, so the fix is safe. Without it, the fix only
    lowers the micro-batch, which shrinks the effective batch (and changes the learning dynamics):
    unsafe. When the accumulation cannot be read statically, the fix is display-only.
    """

    code = "TL101"
    name = "per-device-batch-too-large"
    severity = Severity.ERROR
    summary = "The per-device train batch does not fit the target GPU"
    examples = (
        Example("a 7B full fine-tune with micro-batch 16 on 40 GB cards",
                job(_FLAGS.format(batch=16, accum=1), extra={"zero2.json": _ZERO2}), True,
                ("--gpu", "a100-40gb"), at="finetune.sh:6:35",
                fixed={"finetune.sh": job(_FLAGS.format(batch=4, accum=4))["finetune.sh"]}),
        Example("micro-batch 16 with auto_find_batch_size: the trainer lowers it itself",
                job(_FLAGS.format(batch=16, accum=1) + "--auto_find_batch_size True",
                    extra={"zero2.json": _ZERO2}), False, ("--gpu", "a100-40gb")),
        Example("a local checkpoint known only by the size in its name: no verdict",
                job(_FLAGS.format(batch=16, accum=1).replace("lmsys/vicuna-7b-v1.5", "./ckpt/my-sft-7b"),
                    extra={"zero2.json": _ZERO2}), False, ("--gpu", "a100-40gb")),
        Example("the same recipe with micro-batch 1 and accumulation 16",
                job(_FLAGS.format(batch=1, accum=16), extra={"zero2.json": _ZERO2}), False,
                ("--gpu", "a100-80gb")),
        Example("micro-batch 16 under a DeepSpeed config the environment names (its ZeRO stage is unknown)",
                job(_FLAGS.format(batch=16, accum=1).replace("zero2.json", "$DS_CONFIG")), False,
                ("--gpu", "a100-40gb")),
        Example("micro-batch 2 of a 13B full fine-tune without ZeRO: the model states alone do not fit (TL108)",
                job(_FLAGS.format(batch=2, accum=8).replace("--deepspeed zero2.json\n", "").replace(
                    "vicuna-7b", "vicuna-13b"), launcher="torchrun --nproc_per_node 2"), False, ("--gpu", "a100-40gb")),
        Example("micro-batch 4 with bf16 read from the environment (16-bit training fits)",
                job(_FLAGS.format(batch=4, accum=4).replace("--bf16 True", "--bf16 $USE_BF16"),
                    extra={"zero2.json": _ZERO2}), False, ("--gpu", "a100-40gb")),
        Example("micro-batch 2 fits; only the eval pass, with an eval batch of 8 and metrics, may not (TL103, TL107)",
                job(_FLAGS.format(batch=2, accum=8) + _EVAL_FLAGS, eval_dataset=_WITH_METRICS,
                    extra={"zero2.json": _ZERO2}), False, ("--gpu", "a100-40gb")),
    )

    def check(self, run: TrainingRun, ctx: CheckContext) -> Iterable[Finding]:
        batch = known_int(run, K.PER_DEVICE_TRAIN_BATCH_SIZE)
        if batch is None or batch < 2 or not grounded(run):
            # A micro-batch of 1 has nothing to lower: TL106 and TL108 say what else is too large.
            return
        if run.known(K.AUTO_FIND_BATCH_SIZE) is True:
            return  # the trainer halves the batch itself after an out-of-memory error
        current = training_estimate(run, ctx.gpu)
        if not over_capacity(current) or states_exceed_gpu(current):
            return  # not too large, or too large whatever the batch (TL108)
        fits_at = fitting_batch(run, ctx.gpu, batch - 1)
        message = (f"per_device_train_batch_size {batch} needs about {current.peak_gib:.1f} GiB per GPU "
                   f"({current.low_gib:.1f}–{current.high_gib:.1f}) on {on_gpu(ctx, current)}; the largest "
                   f"term is {current.largest_term} ({current.breakdown.get(current.largest_term, 0):.1f} GiB), "
                   f"with every sample at the {current.sequence_tokens}-token limit{assumption_note(run)}")
        if fits_at is not None:
            smaller = training_estimate(run, ctx.gpu, per_device_train_batch_size=fits_at)
            message += f"; {fits_at} fits ({smaller.peak_gib:.1f} GiB)"
        else:
            message += "; even a micro-batch of 1 does not fit"
        message += "; `trainlint estimate` shows the port plan (the fastest combination of changes that fits)"
        severity = verdict_severity(ctx, self.severity, run)
        short_enough = data_dependent_length(run, ctx.gpu, batch, current)
        if short_enough is not None:
            message += f"; at this batch, {LONG_ROWS_NOTE.format(fits=short_enough)}"
            severity = Severity.WARNING  # a risk of the data, not a certainty
        related: List[Related] = []
        accum_setting = run.setting(K.GRADIENT_ACCUMULATION_STEPS)
        if accum_setting is not None and accum_setting.origin is not None:
            related.append(Related(accum_setting.origin, "gradient accumulation is set here"))
        yield self.finding(run, message, severity=severity, at=run.setting(K.PER_DEVICE_TRAIN_BATCH_SIZE),
                           related=related,
                           fix=self._fix(run, ctx, batch, fits_at))

    def _fix(self, run: TrainingRun, ctx: CheckContext, batch: int, fits_at: Optional[int]) -> Optional[Fix]:
        if fits_at is None:
            return None
        accum = known_int(run, K.GRADIENT_ACCUMULATION_STEPS)
        if run.setting(K.GLOBAL_BATCH_SIZE) is not None:
            return Fix(Applicability.SAFE, f"lower the micro-batch to {fits_at}; the entry script derives "
                                            f"accumulation from the global batch",
                       (KnobChange(K.PER_DEVICE_TRAIN_BATCH_SIZE, batch, fits_at),))
        if not ctx.preserve_effective_batch:
            return Fix(Applicability.UNSAFE,
                       f"lower the micro-batch to {fits_at} (this shrinks the effective batch; "
                       f"--preserve-effective-batch raises accumulation to keep it)",
                       (KnobChange(K.PER_DEVICE_TRAIN_BATCH_SIZE, batch, fits_at),))
        if accum is None:
            return Fix(Applicability.DISPLAY_ONLY,
                       f"lower the micro-batch to {fits_at} and raise gradient accumulation to keep the effective "
                       f"batch (accumulation is not known statically)")
        product = batch * accum
        split = split_keeping_product(product, fits_at)
        smaller, new_accum = split.micro_batch, split.accumulation
        changes = [KnobChange(K.PER_DEVICE_TRAIN_BATCH_SIZE, batch, smaller),
                   KnobChange(K.GRADIENT_ACCUMULATION_STEPS, accum, new_accum)]
        changes += batch_key_changes(run, smaller, new_accum)
        world = known_int(run, K.WORLD_SIZE)
        if world:
            kept = f"effective batch {batch}×{accum}×{world} = {smaller}×{new_accum}×{world} = {product * world}"
        else:
            kept = f"per-device × accumulation {product} kept (world size unknown)"
        return Fix(Applicability.SAFE, f"micro-batch {smaller}, accumulation {new_accum}: {kept}", tuple(changes))
