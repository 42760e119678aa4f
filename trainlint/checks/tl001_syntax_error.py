from __future__ import annotations

from trainlint.checks.base import Example, Rule
from trainlint.core import Severity

_LAUNCHER = "deepspeed --num_gpus 2 train.py --per_device_train_batch_size 4\n"


class SyntaxErrorInFile(Rule):
    """
    ## What it does
    Reports a launcher, entry script or config that does not parse. trainlint reads what it can of
    the rest of the file and goes on with the other files.

    ## Why is this bad
    The settings written after the error are not read, so the checks that depend on them stay
    silent; the job itself will usually fail at start.

    ## Example
    ```json
    {"zero_optimization": {"stage": 3,, }
    ```

    ## Fix safety
    No fix.
    """

    code = "TL001"
    name = "syntax-error"
    severity = Severity.ERROR
    summary = "A file does not parse"
    diagnostic_kinds = ("syntax-error",)
    examples = (
        Example("the launcher's entry script has a syntax error",
                {"finetune.sh": _LAUNCHER, "train.py": "def train(:\n    pass\n"}, True),
        Example("a valid entry script", {"finetune.sh": _LAUNCHER, "train.py": "def train():\n    pass\n"}, False),
    )
