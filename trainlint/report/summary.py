"""A Markdown job summary (for `$GITHUB_STEP_SUMMARY` or a PR comment): the findings as a table and,
per job, where its estimated GPU memory goes."""
from __future__ import annotations

from typing import Iterable, List, Optional, Sequence

from trainlint.core import MemoryEstimate, Report, TrainingRun, Unknown, Value
from trainlint.report.common import (
    by_severity,
    format_value,
    relative_path,
    relative_run_id,
    run_batch,
    severity_of,
    summary_line,
)
from trainlint.report.views import gpu_name

SEVERITY_ICON = {"error": "🔴 error", "warning": "🟡 warning", "info": "🔵 info"}


def cell(text: str) -> str:
    """Text safe inside a Markdown table cell: pipes escaped, line breaks kept as <br>."""
    return "<br>".join(part.strip() for part in str(text).replace("|", "\\|").splitlines()) or " "


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> List[str]:
    lines = ["| " + " | ".join(cell(h) for h in header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines.extend("| " + " | ".join(cell(value) for value in row) + " |" for row in rows)
    return lines


def render_summary(report: Report, *, root: str = ".") -> str:
    lines = ["## trainlint", "", summary_line(report), ""]
    if report.findings:
        lines.extend(_findings_table(report, root))
        lines.append("")
    for run in report.runs:
        lines.extend(_job_section(run, report, root))
    for run_id in sorted(set(report.estimates) - {run.id for run in report.runs}):
        lines.extend(_memory_lines(run_id, report.estimates[run_id], None, report, root))
    return "\n".join(lines).rstrip("\n") + "\n"


def _findings_table(report: Report, root: str) -> List[str]:
    rows = []
    for finding in by_severity(report.findings, root):
        where = relative_path(finding.path, root)
        if finding.origin is not None:
            where += f":{finding.origin.line}:{finding.origin.column}"
        severity = severity_of(finding).value
        rows.append((SEVERITY_ICON[severity], f"{finding.code} {finding.name}", f"`{where}`", finding.message))
    return table(("Severity", "Code", "Location", "Message"), rows)


def _job_section(run: TrainingRun, report: Report, root: str) -> List[str]:
    return _memory_lines(run.id, report.estimates.get(run.id), run, report, root)


def _gib(value: float) -> str:
    return f"{value:.1f}"


def _memory_lines(
    run_id: str, estimate: Optional[MemoryEstimate], run: Optional[TrainingRun], report: Report, root: str
) -> List[str]:
    title = f"### Job `{relative_run_id(run_id, root)}`"
    if run is not None:
        entry = f" → `{relative_path(run.entry, root)}`" if run.entry else ""
        title += f" ({run.launcher}{entry})"
    lines = [title, ""]
    lines.extend(_batch_lines(run_id, run, report))
    if estimate is None:
        lines.extend(["No memory estimate for this job.", ""])
        return lines
    verdict = "fits" if estimate.fits else "**does not fit**"
    lines.append(
        f"GPU {gpu_name(estimate.gpu)} (`{estimate.gpu}`): {_gib(estimate.capacity_gib)} GiB usable; estimated peak "
        f"**{_gib(estimate.peak_gib)} GiB** "
        f"(interval {_gib(estimate.low_gib)}–{_gib(estimate.high_gib)} GiB), {verdict}."
    )
    lines.append("")
    total = sum(estimate.breakdown.values())
    rows = [
        (term, f"{gib:.2f}", f"{gib / total:.0%}" if total > 0 else "–")
        for term, gib in sorted(estimate.breakdown.items(), key=lambda item: -item[1])
    ]
    lines.extend(table(("Term", "GiB", "Share"), rows))
    lines.append("")
    if estimate.assumptions:
        lines.append("Assumptions:")
        lines.extend(f"- {cell(assumption)}" for assumption in estimate.assumptions)
        lines.append("")
    return lines


def _batch_text(value: Value) -> str:
    return f"unknown ({value.reason})" if isinstance(value, Unknown) else format_value(value)


def _batch_lines(run_id: str, run: Optional[TrainingRun], report: Report) -> List[str]:
    if run_id in report.effective_batches:
        before, after = report.effective_batches[run_id]
        return [f"Effective batch: {_batch_text(before)} before, {_batch_text(after)} after the fixes.", ""]
    if run is not None:
        return [f"Effective batch: {_batch_text(run_batch(report, run.id))}.", ""]
    return []
