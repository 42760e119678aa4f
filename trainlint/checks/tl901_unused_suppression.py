from __future__ import annotations

from trainlint.checks._examples import EVAL_HEAVY_FLAGS, ZERO3, job
from trainlint.checks.base import Example, Rule
from trainlint.core import Severity

_FLAGS = EVAL_HEAVY_FLAGS.replace("{strategy}", "steps")


def _suppressed(eval_batch: int):
    files = job(_FLAGS.format(eval_batch=eval_batch), eval_dataset="eval_set", extra={"ds.json": ZERO3})
    files["finetune.sh"] = files["finetune.sh"].replace(
        "#!/bin/bash\n", "#!/bin/bash\n# trainlint: ignore[TL103] -- the eval set is tiny\n", 1)
    return files


class UnusedSuppression(Rule):
    """
    ## What it does
    Reports a `# trainlint: ignore[...]` or `# trainlint: ignore-file[...]` comment that suppresses
    nothing: the codes it names do not fire on the lines it covers (any more), a code it names does
    not exist, or the comment does not parse.

    A directive covers the logical line it ends (a whole `\\`-continued command in shell, a whole
    statement in Python), or, on a line of its own, the logical line below it.

    ## Why is this bad
    A stale suppression hides the next real problem on that line: after someone fixes the batch
    size, `ignore[TL101]` still silences TL101 when the batch is raised again. A misspelled
    directive (`# trainlint: ignore TL101`, without brackets) suppresses nothing at all while
    looking as if it does.

    ## Example
    ```sh
    # trainlint: ignore[TL103] -- the eval set is tiny
    deepspeed train.py --per_device_train_batch_size 4 --per_device_eval_batch_size 4
    ```
    Use instead:
    ```sh
    deepspeed train.py --per_device_train_batch_size 4 --per_device_eval_batch_size 4
    ```

    ## Fix safety
    Safe: removing a directive that suppresses nothing (or the codes in it that are unused) changes
    no finding.
    """

    code = "TL901"
    name = "unused-suppression"
    severity = Severity.WARNING
    summary = "A suppression comment suppresses nothing"
    # The findings come from trainlint.suppressions, after every other rule has run.
    examples = (
        Example("the suppressed eval batch was already lowered to the train batch", _suppressed(4), True,
                at="finetune.sh:2:1", fixed={"finetune.sh": job(_FLAGS.format(eval_batch=4))["finetune.sh"]}),
        Example("the suppression still hides a larger eval batch", _suppressed(16), False),
    )
