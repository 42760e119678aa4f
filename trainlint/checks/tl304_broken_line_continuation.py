from __future__ import annotations

from typing import Optional

from trainlint.checks._examples import TRAIN_PY
from trainlint.checks.base import Example, Rule
from trainlint.core import Applicability, Diagnostic, Edit, Fix, Severity

_BROKEN = ("deepspeed --num_gpus 2 train.py \\\n    --per_device_train_batch_size 4 \\\n"
           "    --report_to tensorboard \\ # or wandb\n    --gradient_checkpointing True\n")
_INTACT = ("deepspeed --num_gpus 2 train.py \\\n    --per_device_train_batch_size 4 \\\n"
           "    --report_to tensorboard \\\n    --gradient_checkpointing True\n")


class BrokenLineContinuation(Rule):
    """
    ## What it does
    Reports a `\\` followed by a space or a comment at the end of a launcher line, and one that continues
    the line into a line holding only a comment (bash joins the two, and the `#` comments out the rest).

    ## Why is this bad
    Only a backslash directly before the newline continues a command. With anything after it the
    command ends on that line: every later flag is run as a separate (failing) command, and the
    trainer silently trains with its defaults for them, such as gradient checkpointing off.

    ## Example
    ```sh
        --report_to "tensorboard" \\ # wandb
        --gradient_checkpointing True
    ```
    Use instead:
    ```sh
        --report_to "tensorboard" \\
        --gradient_checkpointing True
    ```

    ## Fix safety
    Unsafe: after the repair the flags that were cut off reach the trainer, which changes the run
    (that is the point, but the run is no longer the one that was tested). The comment is dropped.
    """

    code = "TL304"
    name = "broken-line-continuation"
    severity = Severity.ERROR
    summary = "A backslash followed by a space or comment ends the command early"
    diagnostic_kinds = ("broken-line-continuation",)
    examples = (
        Example("a comment after the backslash", {"finetune.sh": _BROKEN, "train.py": TRAIN_PY}, True,
                at="finetune.sh:3:29"),
        Example("the backslash ends the line", {"finetune.sh": _INTACT, "train.py": TRAIN_PY}, False),
    )

    def diagnostic_fix(self, diagnostic: Diagnostic) -> Optional[Fix]:
        if diagnostic.origin is None:
            return None
        places = (diagnostic.origin, *diagnostic.also_at)
        return Fix(Applicability.UNSAFE, "end the line with the backslash",
                   edits=tuple(Edit(origin, "\\") for origin in places))
