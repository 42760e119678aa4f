"""`--output-format json`: the documented contract (docs/json-output.md, checked against
docs/json-output.schema.json). Keys appear in the contract's order; unknown values are null with a
sibling reason."""
from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional

from trainlint import __version__
from trainlint.core import (
    Diagnostic,
    Edit,
    Finding,
    MemoryEstimate,
    Origin,
    Report,
    Setting,
    TrainingRun,
    Unknown,
    Value,
)
from trainlint.knobs import K
from trainlint.report.common import (
    applicability_name,
    by_location,
    fix_edits,
    relative_path,
    relative_run_id,
    run_batch,
    severity_of,
)

if TYPE_CHECKING:
    from trainlint.memory.plans import Plan, PortPlan  # the port plans (~10 ms) only for `estimate`'s document

Json = Dict[str, Any]


def render_json(report: Report, *, root: str = ".") -> str:
    document = report_document(report, root=root)
    return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False, default=str) + "\n"


def report_document(report: Report, *, root: str = ".") -> Json:
    return {
        "version": __version__,
        "findings": [finding_document(finding, root) for finding in by_location(report.findings, root)],
        "runs": [run_document(run, report.estimates.get(run.id), run_batch(report, run.id), root)
                 for run in report.runs],
        "unread": [unread_document(diagnostic, root) for diagnostic in report.unread],
    }


def unread_document(diagnostic: Diagnostic, root: str) -> Json:
    """A place the readers could not read statically (no rule owns it; nothing there was checked)."""
    document: Json = {"kind": str(getattr(diagnostic.kind, "value", diagnostic.kind))}
    document.update(_position(diagnostic.origin, root, diagnostic.path))
    document["message"] = diagnostic.message
    return document


def _position(origin: Optional[Origin], root: str, fallback_path: str = "") -> Json:
    if origin is None:
        return {"path": relative_path(fallback_path, root) if fallback_path else None, "line": None, "column": None}
    return {"path": relative_path(origin.path, root), "line": origin.line, "column": origin.column}


def _span(origin: Optional[Origin], root: str, fallback_path: str) -> Json:
    position = _position(origin, root, fallback_path)
    position["end_line"] = origin.end_line if origin else None
    position["end_column"] = origin.end_column if origin else None
    return position


def finding_document(finding: Finding, root: str) -> Json:
    document: Json = {
        "code": finding.code,
        "name": finding.name,
        "severity": severity_of(finding).value,
        "message": finding.message,
    }
    document.update(_span(finding.origin, root, finding.path))
    document["path"] = relative_path(finding.path, root)
    document["run"] = relative_run_id(finding.run_id, root)
    document["related"] = [
        dict(_position(related.origin, root), message=related.message) for related in finding.related
    ]
    document["fix"] = _fix_document(finding, root)
    return document


def _edit_document(edit: Edit, root: str) -> Json:
    document = _span(edit.origin, root, edit.origin.path)
    document["content"] = edit.content
    if edit.creates:
        document["creates"] = True
    return document


def _fix_document(finding: Finding, root: str) -> Optional[Json]:
    if finding.fix is None:
        return None
    return {
        "applicability": applicability_name(finding.fix),
        "message": finding.fix.message,
        "edits": [_edit_document(edit, root) for edit in fix_edits(finding)],
    }


def _plain(value: Value) -> Any:
    """A JSON-safe scalar: non-finite floats have no JSON spelling, so they travel as text."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def _with_reason(key: str, value: Value) -> Json:
    if isinstance(value, Unknown):
        return {key: None, f"{key}_reason": value.reason}
    return {key: _plain(value)}


def setting_document(setting: Setting, root: str) -> Json:
    document: Json = {}
    if isinstance(setting.value, Unknown):
        document.update(value=None, reason=setting.value.reason)
    else:
        document["value"] = _plain(setting.value)
    document.update(_position(setting.origin, root))
    return document


def _world_size(run: TrainingRun) -> Value:
    setting = run.setting(K.WORLD_SIZE)
    return Unknown("world_size is not set") if setting is None else setting.value


def run_document(run: TrainingRun, estimate: Optional[MemoryEstimate], batch: Value, root: str) -> Json:
    document: Json = {
        "id": relative_run_id(run.id, root),
        "launcher": run.launcher,
        "entry": relative_path(run.entry, root) if run.entry else None,
    }
    document.update(_with_reason("world_size", _world_size(run)))
    document["settings"] = {knob: setting_document(run.settings[knob], root) for knob in sorted(run.settings)}
    document.update(_with_reason("effective_batch", batch))
    document["memory"] = memory_document(estimate) if estimate is not None else None
    return document


def _gib(value: float) -> Any:
    return round(value, 2) if math.isfinite(value) else str(value)


def memory_document(estimate: MemoryEstimate) -> Json:
    breakdown: List[Any] = [(term, _gib(gib)) for term, gib in estimate.breakdown.items()]
    return {
        "gpu": estimate.gpu,
        "capacity_gib": _gib(estimate.capacity_gib),
        "peak_gib": _gib(estimate.peak_gib),
        "low_gib": _gib(estimate.low_gib),
        "high_gib": _gib(estimate.high_gib),
        "breakdown": dict(breakdown),
        "assumptions": list(estimate.assumptions),
        "unknowns": list(estimate.unknowns),
    }


def estimate_document(report: Report, plans: Mapping[str, PortPlan], gpu: str, num_gpus: Optional[int], *,
                      root: str = ".") -> Json:
    """`estimate --output-format json`: the target, and each job with its estimate and its port plan."""
    runs = []
    for run in report.runs:
        document = run_document(run, report.estimates.get(run.id), run_batch(report, run.id), root)
        port = plans.get(run.id)
        document["plan"] = port_document(port) if port is not None else None
        runs.append(document)
    return {"version": __version__, "target": {"gpu": gpu, "num_gpus": num_gpus}, "runs": runs}


def port_document(port: PortPlan) -> Json:
    return {
        "needed": port.needed,
        "chosen": plan_document(port.chosen) if port.chosen is not None else None,
        "runners_up": [plan_document(plan) for plan in port.runners_up],
        "best_effort": plan_document(port.best_effort) if port.best_effort is not None else None,
        "global_batch": port.global_batch,
        "notes": list(port.notes),
        "smallest_gpu_as_written": port.smallest_gpu_as_written or None,
        "smallest_gpu_with_plan": port.smallest_gpu_with_plan or None,
    }


def plan_document(plan: Plan) -> Json:
    return {
        "changes": [{"kind": step.kind.value, "description": step.description, "safe": step.safe,
                     "settings": {knob: _plain(value) for knob, value in step.overrides.items()}}
                    for step in plan.steps],
        "safe": plan.safe,
        "peak_gib": _gib(plan.estimate.peak_gib),
        "fits": plan.fits,
        "relative_speed": plan.relative_speed,
    }
