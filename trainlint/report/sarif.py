"""`--output-format sarif`: SARIF 2.1.0 for code scanning. Every registered rule is described once in
`tool.driver.rules` (so a dashboard can show rules that did not fire), its documentation as the help
Markdown; results name their rule by `ruleIndex`. Results point at repo-relative URIs under
`%SRCROOT%`; columns count code points, as Origin does. Links to the project (`informationUri`,
each rule's `helpUri` into docs/rules.md) appear only when the package names its repository."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple
from urllib.parse import quote

from trainlint import __version__
from trainlint.checks import all_rules
from trainlint.checks.docs import anchor, what_it_does
from trainlint.core import Diagnostic, Edit, Finding, Origin, Report, Severity
from trainlint.report.common import (
    SourceLines,
    applicability_name,
    by_location,
    fingerprint,
    fix_edits,
    project_url,
    relative_path,
    relative_run_id,
    severity_of,
)

Json = Dict[str, Any]
SARIF_SCHEMA = "https://raw.githubusercontent.com/oasis-tcs/sarif-spec/master/Schemata/sarif-schema-2.1.0.json"
SRCROOT = "%SRCROOT%"
FINGERPRINT_KEY = "trainlint/v1"
LEVEL_BY_SEVERITY = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def render_sarif(report: Report, *, root: str = ".") -> str:
    return json.dumps(sarif_document(report, root=root), indent=2, ensure_ascii=False, default=str) + "\n"


def sarif_document(report: Report, *, root: str = ".") -> Json:
    findings = by_location(report.findings, root)
    project = project_url()
    rules = rule_descriptors(findings, project)
    index = {rule["id"]: position for position, rule in enumerate(rules)}
    sources = SourceLines(root)
    driver: Json = {"name": "trainlint", "version": __version__, "semanticVersion": __version__}
    if project:
        driver["informationUri"] = project
    driver["rules"] = rules
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": driver},
                "columnKind": "unicodeCodePoints",
                "results": [result(finding, index, root, sources) for finding in findings],
                "invocations": [{
                    "executionSuccessful": True,
                    "toolExecutionNotifications": [unread_notification(d, root) for d in report.unread],
                }],
            }
        ],
    }


def unread_notification(diagnostic: Diagnostic, root: str) -> Json:
    """A place the readers could not read statically, as a SARIF tool notification."""
    location: Json = {"artifactLocation": artifact_location(diagnostic.path, root)}
    if diagnostic.origin is not None:
        location["region"] = {"startLine": diagnostic.origin.line, "startColumn": diagnostic.origin.column}
    return {
        "level": "note",
        "message": {"text": f"could not read statically: {diagnostic.message}"},
        "descriptor": {"id": str(getattr(diagnostic.kind, "value", diagnostic.kind))},
        "locations": [{"physicalLocation": location}],
    }


# --- rules -------------------------------------------------------------------------------------

def help_uri(code: str, project: Optional[str]) -> Optional[str]:
    """The rule's section of docs/rules.md in the project's repository, or None when none is named."""
    if not project:
        return None
    return f"{project.rstrip('/')}/blob/main/docs/rules.md#{anchor(code)}"


@dataclass(frozen=True)
class RuleText:
    summary: str = ""
    description: str = ""  # the first paragraph of "What it does"
    docs: str = ""  # the whole documentation, Markdown


def _descriptor(code: str, name: str, severity: Severity, text: RuleText, project: Optional[str]) -> Json:
    """One rule. Its documentation appears once, as the help Markdown; the plain-text help is the
    summary and where to read the rest (SARIF requires a text form)."""
    summary = text.summary or name
    descriptor: Json = {"id": code, "name": name, "shortDescription": {"text": summary}}
    if text.description:
        descriptor["fullDescription"] = {"text": text.description}
    if text.docs:
        descriptor["help"] = {"text": f"{summary}. `trainlint rule {code}` prints the documentation.",
                              "markdown": text.docs}
    uri = help_uri(code, project)
    if uri:
        descriptor["helpUri"] = uri
    descriptor["defaultConfiguration"] = {"level": LEVEL_BY_SEVERITY[severity]}
    return descriptor


def _registered_descriptors(project: Optional[str]) -> Dict[str, Json]:
    found: Dict[str, Json] = {}
    for rule in all_rules():
        try:
            severity = Severity(rule.severity)
        except ValueError:
            severity = Severity.WARNING
        text = RuleText(getattr(rule, "summary", ""), what_it_does(rule), rule.docs())
        found[rule.code] = _descriptor(rule.code, rule.name, severity, text, project)
    return found


def rule_descriptors(findings: Sequence[Finding], project: Optional[str] = None) -> List[Json]:
    """Every registered rule, plus a minimal entry for any code a finding carries that is not
    registered (so each result has a ruleIndex), ordered by code."""
    descriptors = _registered_descriptors(project)
    for finding in findings:
        if finding.code not in descriptors:
            descriptors[finding.code] = _descriptor(finding.code, finding.name, severity_of(finding), RuleText(),
                                                    project)
    return [descriptors[code] for code in sorted(descriptors)]


# --- results -----------------------------------------------------------------------------------

def artifact_location(path: str, root: str) -> Json:
    relative = relative_path(path, root)
    if os.path.isabs(relative) or relative == ".." or relative.startswith("../"):
        # Outside the source root: an absolute file URI, with no base to resolve against.
        return {"uri": Path(path).resolve().as_uri()}
    # A file name that is not valid UTF-8 (lone surrogates) is percent-encoded as its original bytes.
    return {"uri": quote(relative, errors="surrogateescape"), "uriBaseId": SRCROOT}


def region(origin: Origin) -> Json:
    return {
        "startLine": origin.line,
        "startColumn": origin.column,
        "endLine": origin.end_line,
        "endColumn": origin.end_column,
    }


def physical_location(path: str, origin: Optional[Origin], root: str) -> Json:
    location: Json = {"artifactLocation": artifact_location(path, root)}
    if origin is not None:
        location["region"] = region(origin)
    return location


def _fixes(finding: Finding, root: str) -> List[Json]:
    edits = fix_edits(finding)
    if finding.fix is None or not edits:
        return []
    by_path: Dict[str, List[Edit]] = {}
    for edit in edits:
        by_path.setdefault(edit.origin.path, []).append(edit)
    changes = [
        {
            "artifactLocation": artifact_location(path, root),
            "replacements": [
                {"deletedRegion": region(edit.origin), "insertedContent": {"text": edit.content}}
                for edit in path_edits
            ],
        }
        for path, path_edits in by_path.items()
    ]
    return [{"description": {"text": finding.fix.message or finding.name}, "artifactChanges": changes}]


def result(finding: Finding, rule_index: Dict[str, int], root: str, sources: SourceLines) -> Json:
    document: Json = {
        "ruleId": finding.code,
        "ruleIndex": rule_index[finding.code],
        "level": LEVEL_BY_SEVERITY[severity_of(finding)],
        "message": {"text": finding.message},
        "locations": [{"physicalLocation": physical_location(finding.path, finding.origin, root)}],
    }
    if any(related.origin is not None for related in finding.related):
        document["relatedLocations"] = [
            {
                "id": number,
                "physicalLocation": physical_location(related.origin.path, related.origin, root),
                "message": {"text": related.message},
            }
            for number, related in enumerate(finding.related, start=1)
            if related.origin is not None
        ]
    fixes = _fixes(finding, root)
    if fixes:
        document["fixes"] = fixes
    document["partialFingerprints"] = {FINGERPRINT_KEY: fingerprint(finding, root, sources)}
    properties: List[Tuple[str, Any]] = [("name", finding.name)]
    if finding.run_id:
        properties.append(("run", relative_run_id(finding.run_id, root)))
    if finding.fix is not None:
        properties.append(("fixApplicability", applicability_name(finding.fix)))
    document["properties"] = dict(properties)
    return document
