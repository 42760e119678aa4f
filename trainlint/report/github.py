"""`--output-format github`: workflow commands that GitHub Actions turns into annotations on the
diff, errors first."""
from __future__ import annotations

from typing import List, Sequence, Tuple

from trainlint.core import Diagnostic, Finding, Report, Severity
from trainlint.report.common import by_severity, printable, relative_path, severity_of

COMMAND_BY_SEVERITY = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    """The message part of a workflow command (actions/toolkit `escapeData`); other control
    characters from analysed files are shown, not sent to the log viewer."""
    return printable(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def escape_property(text: str) -> str:
    """A `key=value` property of a workflow command (actions/toolkit `escapeProperty`)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _properties(finding: Finding, root: str) -> List[Tuple[str, str]]:
    properties = [("file", relative_path(finding.path, root))]
    origin = finding.origin
    if origin is not None:
        properties += [
            ("line", str(origin.line)),
            ("col", str(origin.column)),
            ("endLine", str(origin.end_line)),
            ("endColumn", str(origin.end_column)),
        ]
    properties.append(("title", f"trainlint ({finding.code})"))
    return properties


def annotation(finding: Finding, root: str = ".") -> str:
    command = COMMAND_BY_SEVERITY[severity_of(finding)]
    properties = ",".join(f"{key}={escape_property(value)}" for key, value in _properties(finding, root))
    return f"::{command} {properties}::{escape_data(finding.message)}"


def unread_annotation(diagnostic: Diagnostic, root: str = ".") -> str:
    """A notice on a place the readers could not read statically (nothing there was checked)."""
    origin = diagnostic.origin
    properties = [("file", relative_path(origin.path if origin else diagnostic.path, root))]
    if origin is not None:
        properties += [("line", str(origin.line)), ("col", str(origin.column))]
    properties.append(("title", "trainlint (could not read statically)"))
    joined = ",".join(f"{key}={escape_property(value)}" for key, value in properties)
    return f"::notice {joined}::{escape_data(diagnostic.message)}"


def render_github(report: Report, *, root: str = ".", notes: Sequence[str] = ()) -> str:
    lines = [annotation(finding, root) for finding in by_severity(report.findings, root)]
    lines.extend(unread_annotation(diagnostic, root) for diagnostic in report.unread)
    if notes:
        lines.append(f"::notice title=trainlint::{escape_data(' '.join(notes))}")
    return "".join(line + "\n" for line in lines)
