from __future__ import annotations

from typing import Iterable

from trainlint.checks._conditions import eval_interval, evaluation_runs, known_int
from trainlint.checks._examples import job
from trainlint.checks.base import CheckContext, Example, Rule
from trainlint.core import Applicability, Finding, Fix, KnobChange, Severity, TrainingRun

# Below this many steps between evaluations, evaluation is a regular part of the step pattern.
FREQUENT_STEPS = 200
# With a known run length, more evaluations than this are frequent whatever the interval.
MANY_EVALUATIONS = 20
RARE_STEPS = 1000

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
    Reports evaluation that runs every few steps: fewer than 200 steps apart, or more than 20
    evaluations over a run of known length.

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
        Example("evaluation every 50 steps on a validation file", job(_FLAGS.format(strategy="steps", steps=50),
                                                                 eval_dataset="eval_set"), True),
        Example("evaluation every 2000 steps", job(_FLAGS.format(strategy="steps", steps=2000), eval_dataset="eval_set"),
                False),
        Example("eval_steps 50 but evaluation is off", job(_FLAGS.format(strategy="no", steps=50), eval_dataset="eval_set"),
                False),
        Example("eval_steps 50 but the trainer gets eval_dataset=None", job(_FLAGS.format(strategy="steps", steps=50)),
                False),
    )

    def check(self, run: TrainingRun, ctx: CheckContext) -> Iterable[Finding]:
        if run.known("eval_strategy") != "steps" or evaluation_runs(run).runs is not True:
            return
        interval = eval_interval(run)
        if interval.steps is None or interval.steps < 1:
            return
        total = known_int(run, "max_steps")
        count = total // interval.steps if total and total > 0 else None
        frequent = interval.steps < FREQUENT_STEPS or (count is not None and count > MANY_EVALUATIONS)
        if not frequent:
            return
        how_often = f" ({count} evaluations over {total} steps)" if count is not None else ""
        message = (f"evaluation runs every {interval.steps} steps{how_often}: {interval.description}; "
                   f"each evaluation is a new memory peak on top of training")
        new_steps = max(RARE_STEPS, (total // MANY_EVALUATIONS) if total else RARE_STEPS)
        fix = Fix(Applicability.UNSAFE, f"evaluate every {new_steps} steps",
                  (KnobChange("eval_steps", interval.steps, new_steps),))
        yield self.finding(run, message, at=interval.setting, fix=fix)
