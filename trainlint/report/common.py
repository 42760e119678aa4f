"""What every reporter shares: paths relative to the root, ordering, fix wording, the summary line,
the effective batch a report carries for a run and the fingerprint that identifies a finding across
line shifts."""
from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from trainlint.core import (
    Applicability,
    Edit,
    Finding,
    KnobChange,
    Report,
    Severity,
    Unknown,
    Value,
)
from trainlint.readers.source import SourceText, read_source

SEVERITY_ORDER: Tuple[Severity, ...] = (Severity.ERROR, Severity.WARNING, Severity.INFO)
# The `[project.urls]` labels (package metadata) that name the project's repository, by preference.
REPOSITORY_LABELS = ("repository", "source", "source code", "homepage")
TAB_WIDTH = 4
DEFAULT_FIX_COMMAND = "trainlint fix"
_RUN_LINE_SUFFIX = re.compile(r":\d+$")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


# --- paths -------------------------------------------------------------------------------------

def relative_path(path: str, root: str = ".") -> str:
    """`path` relative to `root` with forward slashes when it lies below `root`, else as given.
    Relative paths are taken as relative to the working directory, like readers write them."""
    if not path:
        return path
    absolute = os.path.abspath(path)
    base = os.path.abspath(root)
    below = _below(absolute, base)
    if below is None:  # links resolved only when the path as written is not below the root
        below = _below(os.path.realpath(absolute), os.path.realpath(base))
    return below if below is not None else Path(path).as_posix()


def _below(candidate: str, anchor: str) -> Optional[str]:
    try:
        rel = os.path.relpath(candidate, anchor)
    except ValueError:  # another drive on Windows
        return None
    if rel != os.pardir and not rel.startswith(os.pardir + os.sep):
        return Path(rel).as_posix()
    return None


@dataclass
class SourceLines:
    """Reads each file once per rendering (never raises); lines split on '\\n' like Origin counts them."""

    root: str = "."
    _cache: Dict[str, Optional[List[str]]] = field(default_factory=dict)

    def lines(self, path: str) -> Optional[List[str]]:
        if path not in self._cache:
            self._cache[path] = self._read(path)
        return self._cache[path]

    def line(self, path: str, number: int) -> Optional[str]:
        lines = self.lines(path)
        if lines is None or not 0 < number <= len(lines):
            return None
        return lines[number - 1]

    def _read(self, path: str) -> Optional[List[str]]:
        for candidate in self._candidates(path):
            source = read_source(candidate)
            if isinstance(source, SourceText):
                return [line[:-1] if line.endswith("\r") else line for line in source.text.split("\n")]
        return None

    def _candidates(self, path: str) -> List[str]:
        found = [path]
        if not os.path.isabs(path):
            found.append(os.path.join(self.root, path))
        return found


# --- the project ---------------------------------------------------------------------------------

def project_url() -> Optional[str]:
    """The repository the installed package names in its metadata (`[project.urls]`), or None: links
    to the project are only written when they lead somewhere."""
    from importlib import metadata  # lazy: ~30 ms of every run's start, for SARIF output only

    try:
        entries = metadata.metadata("trainlint").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return None
    urls = {}
    for entry in entries:
        label, _, url = entry.partition(",")
        if url.strip():
            urls.setdefault(label.strip().lower(), url.strip())
    return next((urls[label] for label in REPOSITORY_LABELS if label in urls), None)


# --- findings ----------------------------------------------------------------------------------

def severity_of(finding: Finding) -> Severity:
    try:
        return Severity(finding.severity)
    except ValueError:
        return Severity.WARNING


def location_key(finding: Finding, root: str) -> Tuple[str, int, int, str, str]:
    origin = finding.origin
    line, column = (origin.line, origin.column) if origin else (0, 0)
    return (relative_path(finding.path, root), line, column, finding.code, finding.message)


def by_location(findings: Iterable[Finding], root: str) -> List[Finding]:
    return sorted(findings, key=lambda f: location_key(f, root))


def by_severity(findings: Iterable[Finding], root: str) -> List[Finding]:
    return sorted(findings, key=lambda f: (-severity_of(f).rank,) + location_key(f, root))


def fix_edits(finding: Finding) -> Tuple[Edit, ...]:
    """The byte edits that apply the finding's fix (all of them once the fixers planned it)."""
    return finding.fix.edits if finding.fix is not None else ()


def is_fixable(finding: Finding, applicability: Applicability) -> bool:
    """`trainlint fix` applies it (safe), or applies it under --unsafe-fixes (unsafe)."""
    return (
        finding.fix is not None
        and finding.fix.applicability == applicability
        and bool(fix_edits(finding))
    )


def format_value(value: Value) -> str:
    if isinstance(value, Unknown):
        return "?"
    if value is None:
        return "None"
    return str(value)


def describe_change(change: KnobChange) -> str:
    if change.new is None:
        return f"{change.knob} {format_value(change.old)} → removed"
    return f"{change.knob} {format_value(change.old)} → {format_value(change.new)}"


def fix_line(finding: Finding) -> Optional[str]:
    """`fix (safe): a 8 → 4, b 2 → 4 (reason)`, or `suggestion: ...` when nothing would be edited."""
    fix = finding.fix
    if fix is None:
        return None
    changes = ", ".join(describe_change(change) for change in fix.changes)
    body = " — ".join(part for part in (changes, fix.message.strip()) if part)
    applies = fix.applicability != Applicability.DISPLAY_ONLY and fix_edits(finding)
    if applies:
        return f"fix ({applicability_name(fix)}): {body}"
    return f"suggestion: {body}"


def applicability_name(fix) -> str:
    return str(getattr(fix.applicability, "value", fix.applicability))


def one_line(text: str) -> str:
    return " ".join(text.split())


# --- the summary line --------------------------------------------------------------------------

def _plural(count: int, word: str) -> str:
    if word == "info":
        return f"{count} info"
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


NO_JOB_FOUND = "warning: no training job found, so nothing was checked (give the launcher, recipe or folder)."


def summary_line(report: Report, fix_command: str = DEFAULT_FIX_COMMAND) -> str:
    """`Found 3 problems (2 errors, 1 warning) in 2 jobs; 1 fixable with `trainlint fix`, ...`.
    `fix_command` is the exact command that would apply the fixes (with the flags they need)."""
    findings = report.findings
    if not findings:
        if not report.runs:
            return NO_JOB_FOUND
        return f"No problems found in {_plural(len(report.runs), 'job')}."
    counts = [(severity, sum(1 for f in findings if severity_of(f) == severity)) for severity in SEVERITY_ORDER]
    by_kind = ", ".join(_plural(count, severity.value) for severity, count in counts if count)
    text = f"Found {_plural(len(findings), 'problem')} ({by_kind})"
    jobs = {f.run_id for f in findings if f.run_id is not None}
    if jobs:
        text += f" in {_plural(len(jobs), 'job')}"
    safe = sum(1 for f in findings if is_fixable(f, Applicability.SAFE))
    unsafe = sum(1 for f in findings if is_fixable(f, Applicability.UNSAFE))
    unsafe_command = fix_command.replace(DEFAULT_FIX_COMMAND, f"{DEFAULT_FIX_COMMAND} --unsafe-fixes", 1)
    if safe and unsafe:
        text += f"; {safe} fixable with `{fix_command}`, {unsafe} more with --unsafe-fixes"
    elif safe:
        text += f"; {safe} fixable with `{fix_command}`"
    elif unsafe:
        text += f"; {unsafe} fixable with `{unsafe_command}`"
    return text + "."


# --- runs --------------------------------------------------------------------------------------

def run_batch(report: Report, run_id: str) -> Value:
    """The effective batch the linter computed for the run (reporters never compute it)."""
    return report.run_batches.get(run_id, Unknown("the effective batch was not computed"))


def _split_run_id(run_id: str) -> Tuple[str, str]:
    """(the path, the `:line` after it) of a run id `path:line`, or of a recipe's, which is its path alone."""
    suffix = _RUN_LINE_SUFFIX.search(run_id)
    return (run_id[: suffix.start()], suffix.group(0)) if suffix else (run_id, "")


def run_path(run_id: str, root: str = ".") -> str:
    """The file a run id (`path:line`, `path:line (run by caller:line)`, or a recipe's path alone) names, relative
    to `root`."""
    return relative_path(_split_run_id(run_id.split(" (run by ", 1)[0])[0], root)


def relative_run_id(run_id: Optional[str], root: str = ".") -> Optional[str]:
    """Run ids are `path:line`; the path part follows the same root as every other path."""
    if not run_id:
        return run_id
    path, line = _split_run_id(run_id)
    return relative_path(path, root) + line


# --- fingerprints ------------------------------------------------------------------------------

def fingerprint(finding: Finding, root: str = ".", sources: Optional[SourceLines] = None) -> str:
    """A stable identity for a finding that survives edits elsewhere in the file: the code, the
    path relative to `root`, the run (without its line number) and the text of the origin line
    (whitespace-normalised). The message is left out: its numbers move with the estimates.
    Identical findings on identical lines of one file share a fingerprint."""
    sources = sources or SourceLines(root)
    line_text = ""
    if finding.origin is not None:
        line_text = sources.line(finding.origin.path, finding.origin.line) or ""
    if not line_text:
        # No readable line to anchor on: the message without its numbers is the next stable thing.
        line_text = _NUMBER.sub("#", finding.message)
    run = _RUN_LINE_SUFFIX.sub("", relative_run_id(finding.run_id, root) or "")
    parts: Sequence[str] = (finding.code, relative_path(finding.path, root), run, one_line(line_text))
    # A file name that is not valid UTF-8 arrives with lone surrogates; they hash as they are.
    return hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:32]


# --- text from analysed files ------------------------------------------------------------------

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def printable(text: str) -> str:
    """`text` safe to print on a terminal: control characters (an escape sequence in a file name, a
    source line or a value) shown as `\\x1b` rather than obeyed; tabs and line breaks kept."""
    return _CONTROL.sub(lambda match: f"\\x{ord(match.group(0)):02x}", valid_text(text))


def valid_text(text: str) -> str:
    """`text` encodable as UTF-8: a lone surrogate (a file name that is not valid UTF-8, read with
    surrogateescape) becomes U+FFFD rather than an error at output time."""
    return _SURROGATE.sub("\ufffd", text)
