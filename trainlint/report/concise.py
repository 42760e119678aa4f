"""`--output-format concise`: one `path:line:col: CODE [severity] message` line per finding (ruff's
shape, so editor problem matchers pick it up), in file order, then the summary line."""
from __future__ import annotations

from typing import Sequence

from trainlint.core import Finding, Report
from trainlint.report.common import (
    DEFAULT_FIX_COMMAND,
    by_location,
    one_line,
    printable,
    relative_path,
    relative_run_id,
    run_path,
    severity_of,
    summary_line,
)
from trainlint.report.unknowns import unread_lines


def finding_line(finding: Finding, root: str = ".") -> str:
    # A finding with no origin points at the top of its file, as ruff does for file-level rules.
    line, column = (finding.origin.line, finding.origin.column) if finding.origin else (1, 1)
    path = relative_path(finding.path, root)
    text = f"{path}:{line}:{column}: {finding.code} [{severity_of(finding).value}] {one_line(finding.message)}"
    if finding.run_id and run_path(finding.run_id, root) != path:
        # A file several jobs read (a hostfile, a shared DeepSpeed config): each line says which job it is about.
        text += f" (job: {relative_run_id(finding.run_id, root)})"
    return printable(text)


def render_concise(report: Report, *, root: str = ".", notes: Sequence[str] = (),
                   fix_command: str = DEFAULT_FIX_COMMAND) -> str:
    lines = [finding_line(finding, root) for finding in by_location(report.findings, root)]
    lines.extend(printable(line) for line in unread_lines(report.unread, root))
    lines.extend(notes)
    lines.append(summary_line(report, fix_command))
    return "\n".join(lines) + "\n"
