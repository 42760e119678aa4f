"""Reporters: turn a `Report` into text in one of the output formats. They only format; every
number and decision comes from the layers before.

Each format's module is imported when it is used (names below are looked up on first use): any
`trainlint.report.*` import runs this file first, and a run writes one format."""
from __future__ import annotations

from dataclasses import replace
from importlib import import_module
from typing import TYPE_CHECKING, Any, List, Optional

from trainlint.core import Report

if TYPE_CHECKING:
    from trainlint.report.common import fingerprint, relative_path, summary_line
    from trainlint.report.json_output import report_document
    from trainlint.report.sarif import sarif_document
    from trainlint.report.summary import render_summary
    from trainlint.report.unknowns import Visibility

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

# Name -> the module that defines it.
_LAZY = {
    "DEFAULT_FIX_COMMAND": "common", "fingerprint": "common", "relative_path": "common", "summary_line": "common",
    "valid_text": "common", "render_concise": "concise", "render_full": "full", "render_github": "github",
    "render_json": "json_output", "report_document": "json_output", "render_sarif": "sarif",
    "sarif_document": "sarif", "render_summary": "summary", "Visibility": "unknowns", "folded_lines": "unknowns",
    "split": "unknowns",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{module}"), name)


def render(report: Report, fmt: str, *, root: str = ".", color: bool = False, visibility: Optional["Visibility"] = None,
           fix_command: Optional[str] = None, width: Optional[int] = None) -> str:
    """The report in format `fmt` (one of FORMATS); paths are shown relative to `root`. The
    terminal-facing formats (full, concise, github) fold the info findings `visibility` hides into one
    line per rule; JSON and SARIF keep every finding. `fix_command` is the command the summary line
    names for the fixable findings (with the flags the fixes need; default DEFAULT_FIX_COMMAND)."""
    from trainlint.report.common import DEFAULT_FIX_COMMAND, valid_text

    fix_command = DEFAULT_FIX_COMMAND if fix_command is None else fix_command
    if fmt in ("json", "sarif"):
        if fmt == "json":
            from trainlint.report.json_output import render_json

            return valid_text(render_json(report, root=root))
        from trainlint.report.sarif import render_sarif

        return valid_text(render_sarif(report, root=root))
    from trainlint.report.unknowns import Visibility, folded_lines, split

    shown, folded = split(report.findings, visibility or Visibility())
    notes: List[str] = folded_lines(folded)
    visible = replace(report, findings=tuple(shown))
    if fmt == "full":
        if not color and not visible.findings and not visible.unread and not notes:
            # All the full format draws then is the summary line, unstyled without colour: rich (~20 ms to
            # import) is not needed for it.
            from trainlint.report.common import summary_line

            return summary_line(visible, fix_command) + "\n"
        from trainlint.report.full import render_full

        return render_full(visible, root=root, color=color, notes=notes, fix_command=fix_command, width=width)
    if fmt == "concise":
        from trainlint.report.concise import render_concise

        return render_concise(visible, root=root, notes=notes, fix_command=fix_command)
    if fmt == "github":
        from trainlint.report.github import render_github

        return render_github(visible, root=root, notes=notes)
    raise ValueError(f"unknown output format {fmt!r}; expected one of {', '.join(FORMATS)}")
