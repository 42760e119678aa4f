from __future__ import annotations

from typing import Iterable

from trainlint.checks._conditions import eval_interval, evaluation_runs, known_int
from trainlint.checks._examples import job
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

_FLAGS = """
--per_device_train_batch_size 1
--gradient_accumulation_steps 8
--eval_strategy {strategy}
--eval_steps {steps}
--eval_data_path data/val.json
"""


class FrequentEvaluation(Rule):
    """
    ## What it does
    Reports evaluation that runs every few steps: more than 20 evaluations over a run of known
    length (`max_steps`), or, when the length is not known, fewer than 200 steps between two. It
    stays quiet when evaluation never runs (`eval_strategy "no"`, `eval_dataset=None`) or its
    interval cannot be read.

    ## Why is this bad
    Each evaluation builds its own memory peak (eval batch activations, gathered logits, a
    fragmented allocator) on top of training's. A job that fits its training steps dies at every
    evaluation, over and over, and the runs it restarts evaluate just as often.

    ## Example
    ```sh
    deepspeed train.py --eval_strategy steps --eval_steps 50 --eval_data_path data/val.json
    ```
    Use instead:
    ```sh
    deepspeed train.py --eval_strategy steps --eval_steps 1000 --eval_data_path data/val.json
    ```

    ## Fix safety
    Unsafe: evaluating less often changes what is logged and which checkpoint is judged best.
    """

    code = "TL104"
    name = "frequent-evaluation"
    severity = Severity.WARNING
    summary = "Evaluation runs every few steps, each a new memory peak"
    examples = (
        Example("evaluation every 50 steps on a validation file",
                job(_FLAGS.format(strategy="steps", steps=50), eval_dataset="eval_set"), True,
                at="finetune.sh:6:18"),
        Example("evaluation every 2000 steps",
                job(_FLAGS.format(strategy="steps", steps=2000), eval_dataset="eval_set"), False),
        Example("evaluation every 50 steps of a 300-step run (6 evaluations)",
                job(_FLAGS.format(strategy="steps", steps=50) + "--max_steps 300", eval_dataset="eval_set"), False),
        Example("eval_steps 50 but evaluation is off",
                job(_FLAGS.format(strategy="no", steps=50), eval_dataset="eval_set"), False),
        Example("eval_steps 50 but the trainer gets eval_dataset=None",
                job(_FLAGS.format(strategy="steps", steps=50)), False),
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
        message = (f"evaluation runs every {interval.steps} steps{how_often}: {interval.description}; "
                   f"each evaluation is a new memory peak on top of training")
        fix = Fix(Applicability.UNSAFE, f"evaluate every {new_steps} steps",
                  (KnobChange(K.EVAL_STEPS, interval.steps, new_steps),))
        yield self.finding(run, message, at=interval.setting, fix=fix)
