from __future__ import annotations

from typing import Iterable

from trainlint.checks._conditions import evaluation_runs, is_user_set, known_int
from trainlint.checks._examples import job
from trainlint.checks.base import CheckContext, Example, Rule
from trainlint.core import Applicability, Finding, Fix, KnobChange, Related, Severity, TrainingRun
from trainlint.knobs import K

_FLAGS = """
--per_device_train_batch_size 4
--per_device_eval_batch_size 16
--eval_strategy {strategy}
--eval_steps 500
"""


class EvalBatchExceedsTrainBatch(Rule):
    """
    ## What it does
    Reports a per-device eval batch, set in the launcher, a config or the code, that is larger than
    the train batch when evaluation actually runs (an eval strategy other than "no" and an eval
    dataset given to the trainer).

    ## Why is this bad
    The train batch is usually tuned until it just fits. Evaluation keeps no gradients, but with a
    larger batch its activations and gathered logits can exceed the training peak, and the job dies
    at the first evaluation, hours into the run.

    ## Example
    ```sh
    torchrun train.py --per_device_train_batch_size 4 --per_device_eval_batch_size 16 --eval_strategy steps
    ```
    Use instead:
    ```sh
    torchrun train.py --per_device_train_batch_size 4 --per_device_eval_batch_size 4 --eval_strategy steps
    ```

    ## Fix safety
    Safe: the eval batch changes how many samples are evaluated at once, not the metrics.
    """

    code = "TL103"
    name = "eval-batch-exceeds-train-batch"
    severity = Severity.WARNING
    summary = "Evaluation runs with a per-device batch larger than the train batch"
    examples = (
        Example("evaluation every 500 steps with eval batch 16 over train batch 4",
                job(_FLAGS.format(strategy="steps"), eval_dataset="eval_set"), True, at="finetune.sh:4:34",
                fixed={"finetune.sh": job(_FLAGS.format(strategy="steps").replace(" 16", " 4"))["finetune.sh"]}),
        Example("the same batches but evaluation is off", job(_FLAGS.format(strategy="no"), eval_dataset="eval_set"),
                False),
        Example("a strategy is set but the trainer gets eval_dataset=None", job(_FLAGS.format(strategy="steps")),
                False),
    )

    def check(self, run: TrainingRun, ctx: CheckContext) -> Iterable[Finding]:
        train = known_int(run, K.PER_DEVICE_TRAIN_BATCH_SIZE)
        evaluation = known_int(run, K.PER_DEVICE_EVAL_BATCH_SIZE)
        if train is None or evaluation is None or evaluation <= train or run.facts.eval_uses_train_batch:
            return
        if not is_user_set(run.setting(K.PER_DEVICE_EVAL_BATCH_SIZE)):
            return  # HF's default of 8 was never chosen against this train batch; no evidence of a risk
        verdict = evaluation_runs(run)
        if verdict.runs is not True:
            return
        related = []
        train_setting = run.setting(K.PER_DEVICE_TRAIN_BATCH_SIZE)
        if train_setting is not None and train_setting.origin is not None:
            related.append(Related(train_setting.origin, f"the train batch is {train} here"))
        message = (f"per_device_eval_batch_size {evaluation} is larger than the train batch {train} and evaluation "
                   f"runs ({verdict.reason}): each evaluation can peak above training")
        fix = Fix(Applicability.SAFE, f"evaluate with the train batch ({train})",
                  (KnobChange(K.PER_DEVICE_EVAL_BATCH_SIZE, evaluation, train),))
        yield self.finding(run, message, at=run.setting(K.PER_DEVICE_EVAL_BATCH_SIZE), related=related, fix=fix)
