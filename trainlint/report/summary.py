"""A Markdown job summary (for `$GITHUB_STEP_SUMMARY` or a PR comment). It leads with one table row
per job (the estimate against the GPU's capacity, and the verdict its findings give), then folds
the findings and each job's memory breakdown into `<details>`. Text from the analysed files (paths,
messages) is escaped so that it cannot add headings, links or HTML to the page."""
from __future__ import annotations

import html
from typing import Dict, Iterable, List, Optional, Sequence

from trainlint.core import Finding, MemoryEstimate, Report, TrainingRun, Unknown, Value
from trainlint.report.common import (
    by_severity,
    format_value,
    relative_path,
    relative_run_id,
    run_batch,
    severity_of,
    summary_line,
    valid_text,
)
from trainlint.report.views import gpu_name

SEVERITY_ICON = {"error": "🔴 error", "warning": "🟡 warning", "info": "🔵 info"}
# Backslash-escaped wherever untrusted text is written as Markdown (on one line, so that a heading or
# a list can only start where the text starts).
_MARKDOWN_SPECIALS = "\\`[]<>"  # (and `|`, which `cell` escapes in tables)
_LINE_STARTS = "#>+-="


def _one_line(text: str) -> str:
    return valid_text(str(text)).replace("\r\n", "\n").replace("\r", "\n")


def plain(text: str) -> str:
    """Untrusted text as literal Markdown on one line: no heading, link, emphasis or HTML."""
    flat = " ".join(_one_line(text).split("\n"))
    escaped = "".join("\\" + char if char in _MARKDOWN_SPECIALS else char for char in flat)
    return "\\" + escaped if escaped[:1] in _LINE_STARTS and escaped else escaped


def code(text: str) -> str:
    """Untrusted text as a Markdown code span on one line (a backtick inside cannot close it)."""
    flat = " ".join(_one_line(text).split("\n"))
    fence = "`" * (max((len(part) for part in _backtick_runs(flat)), default=0) + 1)
    padding = " " if "`" in flat else ""
    return f"{fence}{padding}{flat}{padding}{fence}"


def _backtick_runs(text: str) -> List[str]:
    runs, current = [], ""
    for char in text:
        if char == "`":
            current += char
        elif current:
            runs.append(current)
            current = ""
    if current:
        runs.append(current)
    return runs


def html_text(text: str) -> str:
    """Untrusted text inside an HTML element (the `<summary>` of a fold), on one line."""
    return html.escape(" ".join(_one_line(text).split("\n")))


def cell(text: str) -> str:
    """Text safe inside a Markdown table cell: pipes escaped, line breaks kept as <br>."""
    return "<br>".join(part.strip() for part in _one_line(text).replace("|", "\\|").split("\n")) or " "


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> List[str]:
    lines = ["| " + " | ".join(cell(h) for h in header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines.extend("| " + " | ".join(cell(value) for value in row) + " |" for row in rows)
    return lines


def render_summary(report: Report, *, root: str = ".") -> str:
    lines = ["## trainlint", "", summary_line(report), ""]
    by_job = _findings_by_job(report.findings)
    if report.runs:
        lines.extend(_jobs_table(report, by_job, root))
        lines.append("")
    if report.findings:
        lines.extend(_fold(f"Findings ({len(report.findings)})", _findings_table(report, root)))
    for run in report.runs:
        lines.extend(_fold(_job_title(run.id, run, root), _memory_lines(run.id, report.estimates.get(run.id), run,
                                                                        report, bool(by_job.get(run.id)))))
    for run_id in sorted(set(report.estimates) - {run.id for run in report.runs}):
        lines.extend(_fold(_job_title(run_id, None, root), _memory_lines(run_id, report.estimates[run_id], None,
                                                                         report, bool(by_job.get(run_id)))))
    return "\n".join(lines).rstrip("\n") + "\n"


def _fold(title: str, body: List[str]) -> List[str]:
    return ["<details>", f"<summary>{html_text(title)}</summary>", "", *body, "", "</details>", ""]


def _findings_by_job(findings: Iterable[Finding]) -> Dict[str, List[Finding]]:
    found: Dict[str, List[Finding]] = {}
    for finding in findings:
        if finding.run_id:
            found.setdefault(finding.run_id, []).append(finding)
    return found


def _verdict(findings: Sequence[Finding]) -> str:
    """What the findings say; a job with none is not judged by its estimate alone."""
    if not findings:
        return "✅ no finding"
    counts: Dict[str, int] = {}
    for finding in findings:
        counts[severity_of(finding).value] = counts.get(severity_of(finding).value, 0) + 1
    worst = next(level for level in ("error", "warning", "info") if level in counts)
    parts = [f"{count} {level}{'s' if count != 1 and level != 'info' else ''}"
             for level, count in sorted(counts.items(), key=lambda item: ("error", "warning", "info").index(item[0]))]
    return f"{SEVERITY_ICON[worst].split()[0]} {', '.join(parts)}"


def _jobs_table(report: Report, by_job: Dict[str, List[Finding]], root: str) -> List[str]:
    rows = []
    for run in report.runs:
        estimate = report.estimates.get(run.id)
        if estimate is None:
            shown, capacity = "–", "–"
        else:
            shown = f"{_gib(estimate.peak_gib)} GiB ({_gib(estimate.low_gib)}–{_gib(estimate.high_gib)})"
            capacity = f"{_gib(estimate.capacity_gib)} GiB ({gpu_name(estimate.gpu)})"
        rows.append((code(relative_run_id(run.id, root) or ""), shown, capacity, _verdict(by_job.get(run.id, []))))
    return table(("Job", "Estimated peak per GPU", "Usable", "Verdict"), rows)


def _findings_table(report: Report, root: str) -> List[str]:
    rows = []
    for finding in by_severity(report.findings, root):
        where = relative_path(finding.path, root)
        if finding.origin is not None:
            where += f":{finding.origin.line}:{finding.origin.column}"
        severity = severity_of(finding).value
        rows.append((SEVERITY_ICON[severity], f"{finding.code} {finding.name}", code(where), plain(finding.message)))
    return table(("Severity", "Code", "Location", "Message"), rows)


def _job_title(run_id: str, run: Optional[TrainingRun], root: str) -> str:
    title = f"Job {relative_run_id(run_id, root)}"
    if run is not None:
        entry = f" → {relative_path(run.entry, root)}" if run.entry else ""
        title += f" ({run.launcher}{entry})"
    return title


def _gib(value: float) -> str:
    return f"{value:.1f}"


def _memory_lines(run_id: str, estimate: Optional[MemoryEstimate], run: Optional[TrainingRun], report: Report,
                  has_findings: bool) -> List[str]:
    lines = list(_batch_lines(run_id, run, report))
    if estimate is None:
        lines.extend(["No memory estimate for this job.", ""])
        return lines
    if estimate.fits:
        verdict = "fits"
    elif has_findings:
        verdict = "**does not fit**"
    else:
        # No rule reports it: the estimate rests on assumptions (an unknown world size, ...).
        verdict = "above the usable memory, but no rule reports it (see the assumptions)"
    lines.append(
        f"GPU {plain(gpu_name(estimate.gpu))} ({code(estimate.gpu)}): {_gib(estimate.capacity_gib)} GiB usable; "
        f"estimated peak **{_gib(estimate.peak_gib)} GiB** "
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
        lines.extend(f"- {cell(plain(assumption))}" for assumption in estimate.assumptions)
        lines.append("")
    return lines


def _batch_text(value: Value) -> str:
    return f"unknown ({value.reason})" if isinstance(value, Unknown) else format_value(value)


def _batch_lines(run_id: str, run: Optional[TrainingRun], report: Report) -> List[str]:
    if run_id in report.effective_batches:
        before, after = report.effective_batches[run_id]
        return [f"Effective batch: {plain(_batch_text(before))} before, {plain(_batch_text(after))} after the fixes.",
                ""]
    if run is not None:
        return [f"Effective batch: {plain(_batch_text(run_batch(report, run.id)))}.", ""]
    return []
