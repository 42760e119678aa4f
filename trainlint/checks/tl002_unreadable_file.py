from __future__ import annotations

from dataclasses import replace
from typing import Optional

from trainlint.checks.base import Example, Rule
from trainlint.core import Diagnostic, DiagnosticKind, Finding, Severity, TrainingRun


class UnreadableFile(Rule):
    """
    ## What it does
    Reports a file trainlint was asked to read but could not: a binary file, a directory where a
    file was expected, a file it has no permission to read, or one too large to be a launcher.
    A file a launcher names outside the scanned tree is not read either (a pull request could name
    any file on the runner); that is reported as information: its settings are unknown, not wrong.

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
    diagnostic_kinds = (DiagnosticKind.UNREADABLE_FILE, DiagnosticKind.OUTSIDE_TREE)
    examples = (
        Example("a binary file named on the command line", {"finetune.sh": "\x00\x01binary"}, True, at="finetune.sh"),
        Example("a plain launcher", {"finetune.sh": "echo hello\n"}, False),
    )

    def from_diagnostic(self, diagnostic: Diagnostic, run: Optional[TrainingRun]) -> Finding:
        finding = super().from_diagnostic(diagnostic, run)
        if diagnostic.kind == DiagnosticKind.OUTSIDE_TREE:
            return replace(finding, severity=Severity.INFO)
        return finding
