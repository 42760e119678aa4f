from __future__ import annotations

from typing import Iterable

from trainlint.checks._examples import ZERO2, job
from trainlint.checks._memory import (
    PADDED_ROWS_REASON,
    assumption_note,
    fitting_length,
    grounded,
    on_gpu,
    over_capacity,
    rows_fill_the_limit,
    training_estimate,
    verdict_severity,
)
from trainlint.checks.base import CheckContext, Example, Rule
from trainlint.core import Applicability, Finding, Fix, Severity, TrainingRun
from trainlint.knobs import K

_SEQUENCE_TERMS = ("activations", "logits", "vision")

_FLAGS = """
--deepspeed zero2.json
--bf16 True
--per_device_train_batch_size 1
--gradient_checkpointing {gc}
--model_max_length {length}
"""


class LongSequenceRisk(Rule):
    """
    ## What it does
    Reports a sequence length (text plus image tokens) whose activations and logits alone do not
    fit the GPU even at a micro-batch of 1, and says which length would. It stays quiet when the
    estimate is not grounded (see TL101) or when model states, not the sequence, fill the GPU (TL108).
    An overflow that a shorter row avoids is a warning: collators pad a batch to its longest sample, so
    whether any batch is that long depends on the data. With packing (`packing`, `neat_packing`, axolotl's
    `sample_packing`) every row is as long as the limit, and the verdict is an error.

    ## Why is this bad
    Lowering the micro-batch cannot help below 1: activations, the fp32 logits of every token and
    a trained vision tower's activations all grow with the sequence. The job runs out of memory on
    the first long sample, which may be hours into the epoch.

    ## Example
    ```sh
    deepspeed train.py --per_device_train_batch_size 1 --model_max_length 32768 --gradient_checkpointing False
    ```
    Use instead a shorter limit, gradient checkpointing, or sequence parallelism.

    ## Fix safety
    `trainlint fix` applies the job's port plan when one fits (docs/planner.md): safe when it keeps what is
    trained and the global batch, unsafe when it does not (LoRA, a shorter limit). Otherwise display-only: a
    shorter limit truncates training samples (the data changes), and the other remedies need a person's choice.
    """

    code = "TL106"
    name = "long-sequence-risk"
    severity = Severity.ERROR
    summary = "The sequence length drives activations past the GPU"
    examples = (
        Example("32k tokens per sample without checkpointing",
                job(_FLAGS.format(gc="False", length=32768), extra={"zero2.json": ZERO2}), True,
                ("--gpu", "a100-80gb"), at="finetune.sh:7:24",
                fixed={"finetune.sh": job(_FLAGS.format(gc="True", length=32768))["finetune.sh"]}),
        Example("2k tokens per sample", job(_FLAGS.format(gc="True", length=2048), extra={"zero2.json": ZERO2}),
                False, ("--gpu", "a100-80gb")),
    )

    def check(self, run: TrainingRun, ctx: CheckContext) -> Iterable[Finding]:
        if not grounded(run):
            return
        single = training_estimate(run, ctx.gpu, per_device_train_batch_size=1)
        if not over_capacity(single) or single.largest_term not in _SEQUENCE_TERMS:
            return
        length = single.sequence_tokens
        samples = single.micro_batch
        sequence_share = sum(single.breakdown.get(t, 0.0) for t in _SEQUENCE_TERMS)
        image_tokens = single.image_tokens
        tokens = f"the {length}-token limit" + (f" ({image_tokens} of them image tokens)" if image_tokens else "")
        # The entry script may put several samples into one item of the batch (InternLM-XComposer's batch_size).
        who = ("a sample", "needs") if samples <= 1 else (
            f"the {samples} samples the entry script puts in one item, each", "need")
        if single.sequences_per_sample > 1:
            who = ("a sample's chosen and rejected answers (in one batch), each" if samples <= 1 else
                   f"the chosen and rejected answers of the {samples} samples in one item, each", "need")
        message = (f"at a micro-batch of 1, {who[0]} at {tokens}, {who[1]} about {single.peak_gib:.1f} GiB per GPU on "
                   f"{on_gpu(ctx, single)}, {sequence_share:.1f} GiB of it grows with the sequence")
        fitting = fitting_length(run, ctx.gpu, 1, length)
        remedy = (f"a limit of {fitting} tokens fits" if fitting else "no shorter limit fits on its own")
        message += f"{assumption_note(run)}; {remedy}"
        fix = Fix(Applicability.DISPLAY_ONLY,
                  f"{remedy}; or turn on gradient checkpointing, offload, or shard the sequence")
        severity = verdict_severity(ctx, self.severity, run)
        if fitting is not None and not rows_fill_the_limit(run):  # as data_dependent_length, reusing `fitting`
            message += f" ({PADDED_ROWS_REASON})"
            severity = Severity.WARNING  # a risk of the data, not a certainty
        yield self.finding(run, message, severity=severity, at=run.setting(K.MAX_SEQ_LENGTH), fix=fix)
