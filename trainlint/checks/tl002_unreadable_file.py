from __future__ import annotations

from trainlint.checks.base import Example, Rule
from trainlint.core import Severity


class UnreadableFile(Rule):
    """
    ## What it does
    Reports a file trainlint was asked to read but could not: a binary file, a directory where a
    file was expected, a file it has no permission to read, or one too large to be a launcher.

    ## Why is this bad
    Nothing in it was checked. The scan goes on with every other file.

    ## Example
    `trainlint check model.safetensors`

    ## Fix safety
    No fix.
    """

    code = "TL002"
    name = "unreadable-file"
    severity = Severity.ERROR
    summary = "A file could not be read"
    diagnostic_kinds = ("unreadable-file",)
    examples = (
        Example("a binary file named on the command line", {"finetune.sh": "\x00\x01binary"}, True),
        Example("a plain launcher", {"finetune.sh": "echo hello\n"}, False),
    )
