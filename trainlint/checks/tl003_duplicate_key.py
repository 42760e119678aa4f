from __future__ import annotations

from trainlint.checks._examples import job
from trainlint.checks.base import Example, Rule
from trainlint.core import Diagnostic, DiagnosticKind, FileKind, Severity, file_kind

_DUPLICATED = '{\n  "zero_optimization": {"stage": 3},\n  "zero_optimization": {"stage": 2}\n}\n'
_SINGLE = '{\n  "zero_optimization": {"stage": 2}\n}\n'


class DuplicateKey(Rule):
    """
    ## What it does
    Reports a key written twice in the same mapping of a JSON or YAML config.

    ## Why is this bad
    DeepSpeed loads its JSON config with a hook that refuses duplicate keys, so the job stops at
    start-up (an error). PyYAML, which the training frameworks use for recipes, keeps the last value
    without a word, so the first one is silently ignored (a warning): the value a reader sees first
    is not the one that runs.

    ## Example
    ```json
    {
      "zero_optimization": {"stage": 3},
      "zero_optimization": {"stage": 2}
    }
    ```

    ## Fix safety
    No fix: which of the two values was meant is the author's call.
    """

    code = "TL003"
    name = "duplicate-key"
    severity = Severity.ERROR
    summary = "A key is written twice in one mapping of a config"
    diagnostic_kinds = (DiagnosticKind.DUPLICATE_KEY,)
    examples = (
        Example("a DeepSpeed config with `zero_optimization` twice",
                job("--deepspeed ds.json\n--per_device_train_batch_size 4", extra={"ds.json": _DUPLICATED}), True,
                at="ds.json:3:3"),
        Example("every key once",
                job("--deepspeed ds.json\n--per_device_train_batch_size 4", extra={"ds.json": _SINGLE}), False),
    )

    def diagnostic_severity(self, diagnostic: Diagnostic) -> Severity:
        path = diagnostic.origin.path if diagnostic.origin else diagnostic.path
        return Severity.WARNING if file_kind(path) == FileKind.YAML else Severity.ERROR
