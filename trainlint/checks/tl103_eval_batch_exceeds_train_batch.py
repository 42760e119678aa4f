from __future__ import annotations

from typing import Iterable

from trainlint.checks._conditions import evaluation_runs, is_user_set, known_int
from trainlint.checks._examples import EVAL_HEAVY_FLAGS, ZERO3, job
from trainlint.checks._memory import eval_excess_gib
from trainlint.checks.base import CheckContext, Example, Rule
from trainlint.core import Applicability, Finding, Fix, KnobChange, Related, Severity, TrainingRun
from trainlint.knobs import K

_FLAGS = EVAL_HEAVY_FLAGS.replace("{eval_batch}", "16")
# A 7B model trained with ZeRO-3 over 8 GPUs: the model states dominate a training step; an eval pass at four times
# the batch keeps no gradients or optimizer states and stays far below it.
_KNOWN_MODEL = """
--model_name_or_path meta-llama/Llama-2-7b-hf
--deepspeed ds.json
--bf16 True
--model_max_length 512
--per_device_train_batch_size 1
--per_device_eval_batch_size 4
--eval_strategy steps
--eval_steps 500
"""


class EvalBatchExceedsTrainBatch(Rule):
    """
    ## What it does
    Reports a per-device eval batch, set in the launcher, a config or the code, that is larger than
    the train batch when evaluation actually runs (an eval strategy other than "no" and an eval
    dataset given to the trainer). When the memory model knows the job well enough to tell that the
    eval pass stays below a training step (no gradients, no optimizer states), it stays quiet.

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
                job(_FLAGS.format(strategy="steps"), eval_dataset="eval_set", extra={"ds.json": ZERO3}), True,
                at="finetune.sh:8:34",
                fixed={"finetune.sh": job(_FLAGS.format(strategy="steps").replace(" 16", " 4"))["finetune.sh"]}),
        Example("the same batches but evaluation is off",
                job(_FLAGS.format(strategy="no"), eval_dataset="eval_set", extra={"ds.json": ZERO3}), False),
        Example("a strategy is set but the trainer gets eval_dataset=None",
                job(_FLAGS.format(strategy="steps"), extra={"ds.json": ZERO3}), False),
        Example("a known 7B model whose eval pass at batch 4 stays far below its training step",
                job(_KNOWN_MODEL, eval_dataset="eval_set", extra={"ds.json": ZERO3}), False),
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
        excess = eval_excess_gib(run, ctx.gpu)
        if excess == 0:
            return  # the eval pass is known to stay below a training step
        related = []
        train_setting = run.setting(K.PER_DEVICE_TRAIN_BATCH_SIZE)
        if train_setting is not None and train_setting.origin is not None:
            related.append(Related(train_setting.origin, f"the train batch is {train} here"))
        message = (f"per_device_eval_batch_size {evaluation} is larger than the train batch {train} and evaluation "
                   f"runs ({verdict.reason}): each evaluation "
                   + (f"peaks about {excess:.1f} GiB above a training step" if excess else "can peak above training"))
        fix = Fix(Applicability.SAFE, f"evaluate with the train batch ({train})",
                  (KnobChange(K.PER_DEVICE_EVAL_BATCH_SIZE, evaluation, train),))
        yield self.finding(run, message, at=run.setting(K.PER_DEVICE_EVAL_BATCH_SIZE), related=related, fix=fix)
