from __future__ import annotations

from typing import Iterable

from trainlint.checks._conditions import eval_interval, evaluation_runs, known_int
from trainlint.checks._examples import job
from trainlint.checks._memory import eval_excess_gib
from trainlint.checks.base import CheckContext, Example, Rule
from trainlint.core import Applicability, Finding, Fix, KnobChange, Severity, TrainingRun
from trainlint.knobs import K

# When the run length is unknown: below this many steps between evaluations, evaluation is a
# regular part of the step pattern, and the fix proposes the rarer interval.
FREQUENT_STEPS = 200
RARE_STEPS = 1000
# When the run length is known (max_steps), it decides: more evaluations than this are frequent
# whatever the interval, and fewer are not (a short run may evaluate every few steps).
MANY_EVALUATIONS = 20

# A small model with a large vocabulary: at eval batch 32 its logits alone are far above a training step of batch 1.
_FLAGS = """
--per_device_train_batch_size 1
--gradient_accumulation_steps 8
--eval_strategy {strategy}
--eval_steps {steps}
--per_device_eval_batch_size {eval_batch}
--model_name_or_path Qwen/Qwen2.5-0.5B
--bf16 True
--gradient_checkpointing True
"""


class FrequentEvaluation(Rule):
    """
    ## What it does
    Reports evaluation that runs every few steps when each evaluation peaks above a training step:
    more than 20 evaluations over a run of known length (`max_steps`), or, when the length is not
    known, fewer than 200 steps between two, and an eval pass (its batch's activations and logits,
    no gradients) the estimate puts above the training step's peak. It stays quiet when evaluation
    never runs (`eval_strategy "no"`, `eval_dataset=None`), its interval cannot be read, the eval
    pass stays below a training step, or the estimate lacks the model, its sharding, the batches or
    the length. Logits gathered for `compute_metrics` are TL107's and not counted here.

    ## Why is this bad
    A job sized for its training steps reaches a higher peak at every evaluation. The first
    evaluation that does not fit kills the run hours in, and a run that just fits meets the same
    peak again at every interval, each time with a more fragmented allocator.

    ## Example
    ```sh
    deepspeed train.py --per_device_train_batch_size 1 --per_device_eval_batch_size 32 \
        --eval_strategy steps --eval_steps 50
    ```
    Use instead:
    ```sh
    deepspeed train.py --per_device_train_batch_size 1 --per_device_eval_batch_size 32 \
        --eval_strategy steps --eval_steps 1000
    ```
    (and TL103's fix, a smaller eval batch, lowers the peak itself).

    ## Fix safety
    Unsafe: evaluating less often changes what is logged and which checkpoint is judged best.
    """

    code = "TL104"
    name = "frequent-evaluation"
    severity = Severity.WARNING
    summary = "Evaluation runs every few steps, each peaking above a training step"
    examples = (
        Example("evaluation every 50 steps with an eval batch of 32 over a train batch of 1",
                job(_FLAGS.format(strategy="steps", steps=50, eval_batch=32), eval_dataset="eval_set"), True,
                at="finetune.sh:6:18"),
        Example("evaluation every 50 steps whose eval pass stays below a training step",
                job(_FLAGS.format(strategy="steps", steps=50, eval_batch=1), eval_dataset="eval_set"), False),
        Example("evaluation every 2000 steps",
                job(_FLAGS.format(strategy="steps", steps=2000, eval_batch=32), eval_dataset="eval_set"), False),
        Example("evaluation every 50 steps of a 300-step run (6 evaluations)",
                job(_FLAGS.format(strategy="steps", steps=50, eval_batch=32) + "--max_steps 300",
                    eval_dataset="eval_set"), False),
        Example("eval_steps 50 but evaluation is off",
                job(_FLAGS.format(strategy="no", steps=50, eval_batch=32), eval_dataset="eval_set"), False),
        Example("eval_steps 50 but the trainer gets eval_dataset=None",
                job(_FLAGS.format(strategy="steps", steps=50, eval_batch=32)), False),
    )

    def check(self, run: TrainingRun, ctx: CheckContext) -> Iterable[Finding]:
        if run.known(K.EVAL_STRATEGY) != "steps" or evaluation_runs(run).runs is not True:
            return
        interval = eval_interval(run)
        if interval.steps is None or interval.steps < 1:
            return
        total = known_int(run, K.MAX_STEPS)
        if total is not None and total > 0:
            count = total // interval.steps
            if count <= MANY_EVALUATIONS:
                return
            how_often = f" ({count} evaluations over {total} steps)"
            new_steps = min(max(RARE_STEPS, total // MANY_EVALUATIONS), total)  # at least one evaluation
        else:
            if interval.steps >= FREQUENT_STEPS:
                return
            how_often, new_steps = "", RARE_STEPS
        excess = eval_excess_gib(run, ctx.gpu)
        if not excess:
            return  # the eval pass stays below a training step, or how far it goes is not known
        message = (f"evaluation runs every {interval.steps} steps{how_often}: {interval.description}; each "
                   f"evaluation peaks about {excess:.1f} GiB above a training step")
        fix = Fix(Applicability.UNSAFE, f"evaluate every {new_steps} steps",
                  (KnobChange(K.EVAL_STEPS, interval.steps, new_steps),))
        yield self.finding(run, message, at=interval.setting, fix=fix)
