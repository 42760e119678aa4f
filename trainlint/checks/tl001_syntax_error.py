from __future__ import annotations

from trainlint.checks._examples import job
from trainlint.checks.base import Example, Rule
from trainlint.core import DiagnosticKind, Severity

_LAUNCHER = "deepspeed --num_gpus 2 train.py --per_device_train_batch_size 4\n"
_COMMENTED_CONFIG = '{\n  // ZeRO-2 for the 7B run\n  "zero_optimization": {"stage": 2},\n}\n'


class SyntaxErrorInFile(Rule):
    """
    ## What it does
    Reports a launcher, entry script or config that does not parse, and a JSON config written with
    comments or trailing commas. trainlint reads what it can of the rest of the file and goes on
    with the other files.

    ## Why is this bad
    The settings written after the error are not read, so the checks that depend on them stay
    silent; the job itself will usually fail at start. DeepSpeed and transformers load a DeepSpeed
    config with Python's `json.load`, which rejects `//` comments and trailing commas: the job
    stops at start-up even though an editor that reads JSON with comments shows no problem.

    ## Example
    ```json
    {"zero_optimization": {"stage": 3,, }
    ```
    ```json
    {
      // ZeRO-2 for the 7B run
      "zero_optimization": {"stage": 2},
    }
    ```

    ## Fix safety
    No fix.
    """

    code = "TL001"
    name = "syntax-error"
    severity = Severity.ERROR
    summary = "A file does not parse"
    diagnostic_kinds = (DiagnosticKind.SYNTAX_ERROR, DiagnosticKind.NON_STANDARD_JSON)
    examples = (
        Example("the launcher's entry script has a syntax error",
                {"finetune.sh": _LAUNCHER, "train.py": "def train(:\n    pass\n"}, True, at="train.py:1:11"),
        Example("a DeepSpeed config with a comment and a trailing comma",
                job("--deepspeed ds.json\n--per_device_train_batch_size 4", extra={"ds.json": _COMMENTED_CONFIG}),
                True, at="ds.json:2:3"),
        Example("a valid entry script", {"finetune.sh": _LAUNCHER, "train.py": "def train():\n    pass\n"}, False),
    )
