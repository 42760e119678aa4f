"""Reporters: turn a `Report` into text in one of the output formats. They only format; every
number and decision comes from the layers before."""
from __future__ import annotations

from dataclasses import replace
from typing import List, Optional

from trainlint.core import Report
from trainlint.report.common import DEFAULT_FIX_COMMAND, fingerprint, relative_path, summary_line, valid_text
from trainlint.report.concise import render_concise
from trainlint.report.full import render_full
from trainlint.report.github import render_github
from trainlint.report.json_output import render_json, report_document
from trainlint.report.sarif import render_sarif, sarif_document
from trainlint.report.summary import render_summary
from trainlint.report.unknowns import Visibility, folded_lines, split

FORMATS = ("full", "concise", "json", "github", "sarif")

__all__ = [
    "FORMATS",
    "Visibility",
    "fingerprint",
    "relative_path",
    "render",
    "render_summary",
    "report_document",
    "sarif_document",
    "summary_line",
]


def render(report: Report, fmt: str, *, root: str = ".", color: bool = False, visibility: Optional[Visibility] = None,
           fix_command: str = DEFAULT_FIX_COMMAND, width: Optional[int] = None) -> str:
    """The report in format `fmt` (one of FORMATS); paths are shown relative to `root`. The
    terminal-facing formats (full, concise, github) fold the info findings `visibility` hides into one
    line per rule; JSON and SARIF keep every finding. `fix_command` is the command the summary line
    names for the fixable findings (with the flags the fixes need)."""
    if fmt in ("json", "sarif"):
        text = render_json(report, root=root) if fmt == "json" else render_sarif(report, root=root)
        return valid_text(text)
    shown, folded = split(report.findings, visibility or Visibility())
    notes: List[str] = folded_lines(folded)
    visible = replace(report, findings=tuple(shown))
    if fmt == "full":
        return render_full(visible, root=root, color=color, notes=notes, fix_command=fix_command, width=width)
    if fmt == "concise":
        return render_concise(visible, root=root, notes=notes, fix_command=fix_command)
    if fmt == "github":
        return render_github(visible, root=root, notes=notes)
    raise ValueError(f"unknown output format {fmt!r}; expected one of {', '.join(FORMATS)}")
