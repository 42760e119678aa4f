"""`--output-format sarif`: SARIF 2.1.0 for code scanning. Every registered rule is described (so
a dashboard can show rules that did not fire); results point at repo-relative URIs under
`%SRCROOT%`; columns count code points, as Origin does."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple
from urllib.parse import quote

from trainlint import __version__
from trainlint.checks import all_rules
from trainlint.core import Edit, Finding, Origin, Report, Severity
from trainlint.report.common import (
    PROJECT_URL,
    RULES_DOC_URL,
    SourceLines,
    applicability_name,
    by_location,
    fingerprint,
    fix_edits,
    relative_path,
    relative_run_id,
    severity_of,
)

Json = Dict[str, Any]
SARIF_SCHEMA = "https://raw.githubusercontent.com/oasis-tcs/sarif-spec/master/Schemata/sarif-schema-2.1.0.json"
SRCROOT = "%SRCROOT%"
FINGERPRINT_KEY = "trainlint/v1"
MARKDOWN_HEADING = re.compile(r"^#+[ \t]*", re.MULTILINE)
LEVEL_BY_SEVERITY = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def render_sarif(report: Report, *, root: str = ".") -> str:
    return json.dumps(sarif_document(report, root=root), indent=2, ensure_ascii=False, default=str) + "\n"


def sarif_document(report: Report, *, root: str = ".") -> Json:
    findings = by_location(report.findings, root)
    rules = rule_descriptors(findings)
    index = {rule["id"]: position for position, rule in enumerate(rules)}
    sources = SourceLines(root)
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "trainlint",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": PROJECT_URL,
                        "rules": rules,
                    }
                },
                "columnKind": "unicodeCodePoints",
                "results": [result(finding, index, root, sources) for finding in findings],
            }
        ],
    }


# --- rules -------------------------------------------------------------------------------------

def help_uri(code: str) -> str:
    return f"{RULES_DOC_URL}#{code.lower()}"


def _descriptor(code: str, name: str, severity: Severity, summary: str, docs: str) -> Json:
    descriptor: Json = {"id": code, "name": name, "shortDescription": {"text": summary or name}}
    if docs:
        text = MARKDOWN_HEADING.sub("", docs)
        descriptor["fullDescription"] = {"text": text, "markdown": docs}
        descriptor["help"] = {"text": text, "markdown": docs}
    descriptor["helpUri"] = help_uri(code)
    descriptor["defaultConfiguration"] = {"level": LEVEL_BY_SEVERITY[severity]}
    return descriptor


def _registered_descriptors() -> Dict[str, Json]:
    found: Dict[str, Json] = {}
    for rule in all_rules():
        try:
            severity = Severity(rule.severity)
        except ValueError:
            severity = Severity.WARNING
        found[rule.code] = _descriptor(rule.code, rule.name, severity, getattr(rule, "summary", ""), rule.docs())
    return found


def rule_descriptors(findings: Sequence[Finding]) -> List[Json]:
    """Every registered rule, plus a minimal entry for any code a finding carries that is not
    registered (so each result has a ruleIndex), ordered by code."""
    descriptors = _registered_descriptors()
    for finding in findings:
        if finding.code not in descriptors:
            descriptors[finding.code] = _descriptor(finding.code, finding.name, severity_of(finding), "", "")
    return [descriptors[code] for code in sorted(descriptors)]


# --- results -----------------------------------------------------------------------------------

def artifact_location(path: str, root: str) -> Json:
    relative = relative_path(path, root)
    if os.path.isabs(relative) or relative == ".." or relative.startswith("../"):
        # Outside the source root: an absolute file URI, with no base to resolve against.
        return {"uri": Path(path).resolve().as_uri()}
    return {"uri": quote(relative), "uriBaseId": SRCROOT}


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
