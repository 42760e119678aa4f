"""`--output-format github`: workflow commands that GitHub Actions turns into annotations on the
diff, errors first."""
from __future__ import annotations

from typing import List, Tuple

from trainlint.core import Finding, Report, Severity
from trainlint.report.common import by_severity, relative_path, severity_of

COMMAND_BY_SEVERITY = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    """The message part of a workflow command (actions/toolkit `escapeData`)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


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


def render_github(report: Report, *, root: str = ".") -> str:
    return "".join(annotation(finding, root) + "\n" for finding in by_severity(report.findings, root))
