from __future__ import annotations

from typing import Iterable, List, Tuple

from trainlint.checks._conditions import known_int
from trainlint.checks._examples import job
from trainlint.checks._memory import (
    LONG_ROWS_NOTE,
    assumption_note,
    data_dependent_length,
    grounded,
    on_gpu,
    over_capacity,
    training_estimate,
    training_step,
    verdict_severity,
)
from trainlint.checks.base import CheckContext, Example, Rule
from trainlint.checks.tl101_per_device_batch_too_large import PerDeviceBatchTooLarge
from trainlint.checks.tl102_gradient_checkpointing_off import GradientCheckpointingOff
from trainlint.checks.tl106_long_sequence_risk import LongSequenceRisk
from trainlint.checks.tl108_model_states_exceed_gpu import ModelStatesExceedGpu
from trainlint.checks.tl110_image_tiling_multiplier import ImageTilingMultiplier
from trainlint.core import Applicability, Finding, Fix, Severity, TrainingRun
from trainlint.knobs import K
from trainlint.memory import JobMemoryEstimate, suggestions

# The rules that name the one setting to change; this rule speaks only when none of them does.
_KNOB_RULES = (PerDeviceBatchTooLarge(), LongSequenceRisk(), ModelStatesExceedGpu(), ImageTilingMultiplier(),
               GradientCheckpointingOff())
# How many terms and remedies a message names.
_NAMED_TERMS = 3
_NAMED_REMEDIES = 3

_FLAGS = """
--deepspeed zero2.json
--model_name_or_path Qwen/Qwen2-7B
--fp16 True
--per_device_train_batch_size 1
--gradient_checkpointing True
--model_max_length 2048
"""
_ZERO2 = """{
  "fp16": {"enabled": "auto"},
  "train_micro_batch_size_per_gpu": "auto",
  "gradient_accumulation_steps": "auto",
  "zero_optimization": {"stage": 2}
}
"""


class JobExceedsGpu(Rule):
    """
    ## What it does
    Reports a job whose estimated peak per GPU exceeds the GPU by more than the estimate's error
    (10%) when no rule about one setting explains it: the micro-batch is already 1 (TL101), the model
    states alone fit (TL108), the sequence is not what fills the GPU (TL106), checkpointing is on
    (TL102) and no image tiling multiplies the tokens (TL110). It names the largest terms of the
    estimate and the changes that would make the job fit.

    It needs the same grounding as the other memory rules: a known model, micro-batch and sequence
    length. A sharding it cannot read (`--deepspeed $DS_CONFIG`) or a GPU count the launch does not
    state is judged at the least any value leaves on each GPU (ZeRO-3 with parameters and optimizer
    offloaded, as many GPUs as there may be): what remains is activations, logits and the gathered
    layers, which no sharding divides. A verdict that rests on a GPU the user did not name, or that
    is judged at such a floor, is a warning.
    An overflow that a shorter row avoids is a warning: collators pad a batch to its longest sample, so
    whether any batch is that long depends on the data. With packing (`packing`, `neat_packing`, axolotl's
    `sample_packing`) every row is as long as the limit, and the verdict is an error.

    ## Why is this bad
    The job cannot start training on this hardware whatever its data: the optimizer step or the
    first backward pass runs out of memory, after the model has loaded.

    ## Example
    ```sh
    deepspeed --num_gpus 8 train.py --deepspeed zero2.json --model_name_or_path Qwen/Qwen2-7B \\
        --fp16 True --per_device_train_batch_size 1 --gradient_checkpointing True --model_max_length 2048
    ```
    On 32 GB V100s, ZeRO-2 still keeps every 16-bit weight on each GPU and a share of the fp32
    optimizer states. Use instead ZeRO-3, offload the optimizer to the CPU, or train LoRA adapters.

    ## Fix safety
    `trainlint fix` applies the job's port plan when one fits (docs/planner.md): safe when it keeps what is
    trained and the global batch, unsafe when it does not (LoRA, a shorter limit). Otherwise display-only: the
    remedies it names (more sharding, offload, LoRA, more GPUs) need a person's choice.
    """

    code = "TL111"
    name = "job-exceeds-gpu"
    severity = Severity.ERROR
    summary = "The whole training step does not fit the GPU, and no single setting explains it"
    examples = (
        Example("a 7B full fine-tune at micro-batch 1 with ZeRO-2 on eight 32 GB V100s: the port plan is ZeRO-3",
                job(_FLAGS, extra={"zero2.json": _ZERO2}), True, ("--gpu", "v100-32gb"), at="finetune.sh:4:26",
                fixed={"zero2.json": _ZERO2.replace('"stage": 2', '"stage": 3')}),
        Example("the same job on 80 GB cards",
                job(_FLAGS, extra={"zero2.json": _ZERO2}), False, ("--gpu", "a100-80gb")),
        Example("the same job with its ZeRO stage read from the environment: no verdict",
                job(_FLAGS.replace("zero2.json", "$DS_CONFIG")), False, ("--gpu", "v100-32gb")),
        Example("a 7B job at a 10000-token limit, its DeepSpeed config read from the environment: even the "
                "least any config leaves (the logits and activations) overflows a 24 GB card",
                job(_FLAGS.replace("zero2.json", "$DS_CONFIG").replace("2048", "10000")), True, ("--gpu", "rtx4090"),
                at="finetune.sh:4:26"),
    )

    def check(self, run: TrainingRun, ctx: CheckContext) -> Iterable[Finding]:
        if not grounded(run, any_world=True, any_sharding=True):
            return
        current = training_estimate(run, ctx.gpu)
        if not over_capacity(current) or owned_by_knob_rule(run, ctx):
            return
        message, fix = whole_step_report(run, ctx, current, "")
        severity = verdict_severity(ctx, self.severity, run)
        short_enough = data_dependent_length(run, ctx.gpu, known_int(run, K.PER_DEVICE_TRAIN_BATCH_SIZE) or 1,
                                             current)
        if short_enough is not None:
            message += f"; {LONG_ROWS_NOTE.format(fits=short_enough)}"
            severity = Severity.WARNING  # a risk of the data, not a certainty
        # No one setting explains a whole-step overflow: the finding sits on the model, whose size the
        # terms follow, not on a batch that may already be 1.
        yield self.finding(run, message, severity=severity,
                           at=run.setting(K.MODEL_NAME_OR_PATH) or run.setting(K.PER_DEVICE_TRAIN_BATCH_SIZE), fix=fix)


def whole_step_report(run: TrainingRun, ctx: CheckContext, current: JobMemoryEstimate, verdict: str) -> Tuple[str, Fix]:
    """The message of a whole-step verdict (the peak, its interval and GPU, `verdict`, the largest terms, the
    changes that fit) and its display-only fix; the rules on the whole step (TL111, TL113) share it."""
    message = (f"the training step needs about {current.peak_gib:.1f} GiB per GPU "
               f"({current.low_gib:.1f}–{current.high_gib:.1f}) on {on_gpu(ctx, current)}"
               f"{assumption_note(run)}{verdict}; largest terms: {largest_terms(current)}")
    remedies = fitting_remedies(run, ctx)
    message += f"; fits with: {remedies}" if remedies else "; no single change trainlint knows makes it fit"
    return message, Fix(Applicability.DISPLAY_ONLY, remedies or "shard or offload the model states, or use more GPUs")


def owned_by_knob_rule(run: TrainingRun, ctx: CheckContext) -> bool:
    """Whether a rule about one setting already reports this job."""
    return any(finding.severity.rank >= Severity.WARNING.rank
               for rule in _KNOB_RULES for finding in rule.check(run, ctx))


def largest_terms(current: JobMemoryEstimate) -> str:
    ranked = sorted(current.breakdown.items(), key=lambda item: -item[1])[:_NAMED_TERMS]
    return ", ".join(f"{term} {gib:.1f} GiB" for term, gib in ranked)


def fitting_remedies(run: TrainingRun, ctx: CheckContext) -> str:
    """The first few suggested changes after which the job fits, each with its estimated peak, judged from the
    same floor as the verdict."""
    fitting: List[str] = []
    for suggestion in suggestions(run, ctx.gpu, base=training_step(run)):
        if suggestion.estimate.peak_gib <= suggestion.estimate.capacity_gib:
            fitting.append(f"{suggestion.description} ({suggestion.estimate.peak_gib:.1f} GiB)")
        if len(fitting) == _NAMED_REMEDIES:
            break
    return "; ".join(fitting)
