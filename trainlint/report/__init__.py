"""Reporters: turn a `Report` into text in one of the output formats. They only format; every
number and decision comes from the layers before."""
from __future__ import annotations

from trainlint.core import Report
from trainlint.report.common import fingerprint, relative_path, summary_line
from trainlint.report.concise import render_concise
from trainlint.report.full import render_full
from trainlint.report.github import render_github
from trainlint.report.json_output import render_json, report_document
from trainlint.report.sarif import render_sarif, sarif_document
from trainlint.report.summary import render_summary

FORMATS = ("full", "concise", "json", "github", "sarif")

__all__ = [
    "FORMATS",
    "fingerprint",
    "relative_path",
    "render",
    "render_summary",
    "report_document",
    "sarif_document",
    "summary_line",
]


def render(report: Report, fmt: str, *, root: str = ".", color: bool = False) -> str:
    """The report in format `fmt` (one of FORMATS); paths are shown relative to `root`."""
    if fmt == "full":
        return render_full(report, root=root, color=color)
    if fmt == "concise":
        return render_concise(report, root=root)
    if fmt == "json":
        return render_json(report, root=root)
    if fmt == "github":
        return render_github(report, root=root)
    if fmt == "sarif":
        return render_sarif(report, root=root)
    raise ValueError(f"unknown output format {fmt!r}; expected one of {', '.join(FORMATS)}")
