from __future__ import annotations

from typing import Iterable

from trainlint.checks._conditions import evaluation_runs, known_bool, known_int
from trainlint.checks._examples import job
from trainlint.checks.base import CheckContext, Example, Rule
from trainlint.core import Applicability, Finding, Fix, KnobChange, Severity, TrainingRun
from trainlint.knobs import K
from trainlint.memory import resolve_model
from trainlint.resolution.frameworks.memory_features import CLASSIFIER

ACCUMULATION_PROPOSED = 4
GIB = 2**30

_WITH_METRICS = "eval_set, compute_metrics=compute_accuracy"
_METRICS_WHEN_GENERATING = "eval_set, compute_metrics=compute_accuracy if training_args.predict_with_generate else None"
_FLAGS = "--eval_strategy steps\n--eval_steps 1000\n--per_device_eval_batch_size 4\n--model_max_length 2048{extra}"


class EvalAccumulatesPredictions(Rule):
    """
    ## What it does
    Reports evaluation with `compute_metrics` and no `eval_accumulation_steps`: the trainer keeps
    the logits of every eval batch on the GPU until the whole eval set has been seen. Metrics given
    under a branch (`compute_metrics=ComputeMetrics(...) if training_args.predict_with_generate else
    None`) count when the launch takes it.

    ## Why is this bad
    Logits are batch × sequence × vocabulary values: for a 32k vocabulary and 2,048 tokens, 256 MiB
    per sample in fp32. Gathered over an eval set they outgrow any GPU; the job dies at the end of
    its first evaluation.

    ## Example
    ```sh
    torchrun train.py --eval_strategy steps       # Trainer(..., compute_metrics=compute_accuracy)
    ```
    Use instead:
    ```sh
    torchrun train.py --eval_strategy steps --eval_accumulation_steps 4
    ```

    ## Fix safety
    Safe: predictions move to the CPU every few steps; the metrics are the same (the host needs the
    memory instead).
    """

    code = "TL107"
    name = "eval-accumulates-predictions"
    severity = Severity.WARNING
    summary = "Metrics are computed over logits gathered on the GPU"
    examples = (
        Example("compute_metrics without eval_accumulation_steps",
                job(_FLAGS.format(extra=""), eval_dataset=_WITH_METRICS), True, at="finetune.sh:3:21",
                fixed={"finetune.sh": job(_FLAGS.format(extra="\n--eval_accumulation_steps 4"))["finetune.sh"]}),
        Example("predictions moved to the CPU every 4 steps",
                job(_FLAGS.format(extra="\n--eval_accumulation_steps 4"), eval_dataset=_WITH_METRICS), False),
        Example("logits reduced before they are gathered",
                job(_FLAGS.format(extra=""), eval_dataset=_WITH_METRICS + ", preprocess_logits_for_metrics=argmax"),
                False),
        Example("no compute_metrics", job(_FLAGS.format(extra=""), eval_dataset="eval_set"), False),
        Example("compute_metrics only under a flag the launch leaves off",
                job(_FLAGS.format(extra=""), eval_dataset=_METRICS_WHEN_GENERATING), False),
        Example("compute_metrics under a flag the launch turns on",
                job(_FLAGS.format(extra="\n--predict_with_generate True"), eval_dataset=_METRICS_WHEN_GENERATING),
                True, at="finetune.sh:3:21",
                fixed={"finetune.sh": job(_FLAGS.format(
                    extra="\n--predict_with_generate True\n--eval_accumulation_steps 4"))["finetune.sh"]}),
    )

    def check(self, run: TrainingRun, ctx: CheckContext) -> Iterable[Finding]:
        if run.facts.compute_metrics is not True or evaluation_runs(run).runs is not True:
            return
        if run.facts.reduces_logits:
            return  # preprocess_logits_for_metrics keeps only what the metric needs (argmax ids)
        if run.value(CLASSIFIER) is True:
            return  # a classifier's predictions are a few scores per sequence, not a vocabulary per token
        if run.facts.own_trainer:
            return  # the repository's own Trainer may hand the metrics something else (a reward per pair)
        if run.value(K.EVAL_ACCUMULATION_STEPS) is not None or known_bool(run, K.PREDICTION_LOSS_ONLY):
            return
        batch = known_int(run, K.PER_DEVICE_EVAL_BATCH_SIZE)
        length = known_int(run, K.MAX_SEQ_LENGTH)
        model = resolve_model(run)
        size = ""
        if batch and length and model is not None and model.vocab:
            per_batch = batch * length * model.vocab * 4 / GIB
            size = f" ({per_batch:.2f} GiB of fp32 logits per eval batch of {batch} × {length} tokens)"
        message = (f"compute_metrics is set and eval_accumulation_steps is not: every eval batch's logits stay on "
                   f"the GPU until the eval set ends{size}")
        fix = Fix(Applicability.SAFE, f"move predictions to the CPU every {ACCUMULATION_PROPOSED} eval steps",
                  (KnobChange(K.EVAL_ACCUMULATION_STEPS, None, ACCUMULATION_PROPOSED),))
        yield self.finding(run, message, at=run.setting(K.EVAL_STRATEGY), fix=fix)
