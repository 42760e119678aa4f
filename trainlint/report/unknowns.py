"""What a terminal report says once per scan rather than once per job: the info findings it folds
(for a rule that says what trainlint could not know, how many jobs and the setting that answers it)
and the places the readers could not read statically. JSON and SARIF keep every finding."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Dict, Iterable, List, Sequence, Tuple

from trainlint.checks import rule_by_code
from trainlint.core import Diagnostic, Finding, Severity
from trainlint.report.common import one_line, relative_path, severity_of

# Unread places listed one by one before the list is cut to a count.
UNREAD_LISTED = 5


@dataclass(frozen=True)
class Visibility:
    """Which findings a terminal report shows. Info findings are folded unless `show_info`, or their
    code is among the codes the user selected by name (`--select TL301`)."""

    show_info: bool = True
    selected: Tuple[str, ...] = ()

    def shows(self, finding: Finding) -> bool:
        if self.show_info or severity_of(finding) != Severity.INFO:
            return True
        return any(prefix != "ALL" and finding.code.startswith(prefix.upper()) for prefix in self.selected)


def split(findings: Iterable[Finding], visibility: Visibility) -> Tuple[List[Finding], List[Finding]]:
    """(shown, folded) under `visibility`."""
    shown: List[Finding] = []
    folded: List[Finding] = []
    for finding in findings:
        (shown if visibility.shows(finding) else folded).append(finding)
    return shown, folded


def _jobs(count: int) -> str:
    return f"{count} job" if count == 1 else f"{count} jobs"


def folded_lines(folded: Sequence[Finding]) -> List[str]:
    """One line per folded code: `Unknown in 12 jobs: the world size ... — answer it with ...`."""
    by_code: Dict[str, List[Finding]] = {}
    for finding in folded:
        by_code.setdefault(finding.code, []).append(finding)
    lines = []
    for code in sorted(by_code):
        found = by_code[code]
        rule = rule_by_code(code)
        jobs = len({f.run_id for f in found if f.run_id}) or len(found)
        if rule is not None and rule.answered_by:
            lines.append(f"Unknown in {_jobs(jobs)}: {rule.summary.lower()} ({code}); answer it with "
                         f"{rule.answered_by}.")
        else:
            name = rule.name if rule is not None else found[0].name
            lines.append(f"{len(found)} info finding{'s' if len(found) != 1 else ''} {code} {name} not shown.")
    if lines:
        lines.append("(--show-info lists them one by one.)")
    return lines


def unread_lines(unread: Sequence[Diagnostic], root: str = ".") -> List[str]:
    """`Could not read statically (3):` and the first few places; the rest as a count."""
    if not unread:
        return []
    lines = [f"Could not read statically ({len(unread)}), so not checked there:"]
    for diagnostic in unread[:UNREAD_LISTED]:
        lines.append(f"  {unread_location(diagnostic, root)}: {one_line(diagnostic.message)}")
    rest = unread[UNREAD_LISTED:]
    if rest:
        files = Counter(relative_path(d.origin.path if d.origin else d.path, root) for d in rest)
        lines.append(f"  ... and {len(rest)} more in {len(files)} file{'s' if len(files) != 1 else ''} "
                     f"(the JSON output lists them all)")
    return lines


def unread_location(diagnostic: Diagnostic, root: str = ".") -> str:
    path = relative_path(diagnostic.origin.path if diagnostic.origin else diagnostic.path, root)
    return f"{path}:{diagnostic.origin.line}:{diagnostic.origin.column}" if diagnostic.origin else path
