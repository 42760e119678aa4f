from __future__ import annotations

from trainlint.checks._examples import job
from trainlint.checks.base import Example, Rule
from trainlint.core import Severity


class InvalidSettingValue(Rule):
    """
    ## What it does
    Reports a value that cannot parse as its setting's type, such as
    `--per_device_train_batch_size w` or `--bf16 yes-please`.

    ## Why is this bad
    The argument parser stops the job at start-up, usually after the launcher has already reserved
    the GPUs; in a config file the value may instead be silently misread.

    ## Example
    ```sh
    torchrun train.py --per_device_train_batch_size w
    ```
    Use instead `--per_device_train_batch_size 4`.

    ## Fix safety
    No fix: the intended value is not knowable.
    """

    code = "TL303"
    name = "invalid-setting-value"
    severity = Severity.ERROR
    summary = "A value cannot parse as its setting's type"
    diagnostic_kinds = ("invalid-value",)
    examples = (
        Example("a letter as the batch size", job("--per_device_train_batch_size w"), True, at="finetune.sh:3:35"),
        Example("a number as the batch size", job("--per_device_train_batch_size 4"), False),
    )
