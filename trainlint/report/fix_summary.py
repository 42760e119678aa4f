"""What `trainlint fix` says it did: the fixes applied per job with the effective batch before and
after, then what was left (rejected, unsafe without --unsafe-fixes, or for a human)."""
from __future__ import annotations

from typing import Dict, List, Optional

from trainlint.core import Applicability, Finding, Unknown, Value
from trainlint.fixers.engine import FixOutcome
from trainlint.fixers.planner import PlannedFix
from trainlint.gitignore import ignored_by_repository


def _value(value: Value) -> str:
    return "unknown" if isinstance(value, Unknown) else str(value)


def _changes(plan: PlannedFix) -> str:
    fix = plan.finding.fix
    parts = [f"{c.knob} {_value(c.old)} → {_value(c.new)}" for c in fix.changes] if fix else []
    return ", ".join(parts) or (fix.message if fix else "")


def _where(finding: Finding) -> str:
    origin = finding.origin
    return f"{finding.path}:{origin.line}:{origin.column}" if origin else finding.path


def render_fix_summary(outcome: FixOutcome, unsafe: bool, preview: bool = False) -> str:
    verb = "Would fix" if preview else "Fixed"
    lines = []
    count = len(outcome.applied)
    files = outcome.files_changed
    if count:
        shown = [f"{path} (new)" if path in outcome.files_created else path for path in files]
        lines.append(f"{verb} {count} finding{'s' if count != 1 else ''} in {len(files)} "
                     f"file{'s' if len(files) != 1 else ''}: {', '.join(shown)}")
        lines.extend(_ignored_lines(outcome.files_created, preview))
    else:
        lines.append("No fixes to apply." if not preview else "No fixes would be applied.")
    by_run: Dict[Optional[str], List[PlannedFix]] = {}
    for plan in outcome.applied:
        by_run.setdefault(plan.finding.run_id, []).append(plan)
    for key, (run, before) in outcome.before.items():
        _, after = outcome.after.get(key, (run, before))
        plans = by_run.pop(run.id, [])
        if not plans and not preview and before == after:
            continue
        lines.append(f"{run.id} ({run.launcher}): {_batch_change(before, after)}")
        lines.extend(f"  {p.code} {_changes(p)} ({p.applicability.value})" for p in plans)
    for plans in by_run.values():
        lines.extend(f"{_where(p.finding)}: {p.code} {_changes(p)} ({p.applicability.value})" for p in plans)
    lines.extend(_left_lines(outcome, unsafe))
    return "\n".join(lines) + "\n"


def _ignored_lines(created: List[str], preview: bool) -> List[str]:
    """A file the fixes create that the repository's `.gitignore` ignores (LLaVA's ignores `*.json`) would be left out
    of a commit of the launcher that now names it: say so, with the command that adds it."""
    ignored = [path for path in created if ignored_by_repository(path)]
    if not ignored:
        return []
    verb = ("would be" if preview else "is") if len(ignored) == 1 else ("would be" if preview else "are")
    them = "it" if len(ignored) == 1 else "them"
    return [f"note: {', '.join(ignored)} {verb} ignored by the repository's .gitignore; commit {them} with the "
            f"launchers that name {them}: git add -f {' '.join(ignored)}"]


def _batch_change(before: Value, after: Value) -> str:
    if isinstance(before, Unknown) and isinstance(after, Unknown):
        return f"effective batch unknown ({after.reason}); per-device × accumulation is what the fixes keep"
    if before == after:
        return f"effective batch {_value(before)} (unchanged)"
    return f"effective batch {_value(before)} → {_value(after)}"


def _left_lines(outcome: FixOutcome, unsafe: bool) -> List[str]:
    lines = []
    for plan, problem in outcome.rejected:
        lines.append(f"{_where(plan.finding)}: {plan.code} not applied: {problem}")
    unsafe_left = [p for p in outcome.left if p.edits and p.applicability == Applicability.UNSAFE and not unsafe]
    if unsafe_left:
        lines.append(f"{len(unsafe_left)} more fix{'es' if len(unsafe_left) != 1 else ''} with --unsafe-fixes "
                     f"(they may change training results):")
        lines.extend(f"  {_where(p.finding)}: {p.code} {_changes(p)}" for p in unsafe_left)
    manual = [p for p in outcome.left if p.applicability == Applicability.DISPLAY_ONLY]
    if manual:
        lines.append("Left for a human:")
        for plan in manual:
            why = plan.problem or plan.finding.fix.message
            lines.append(f"  {_where(plan.finding)}: {plan.code} {why}")
    return lines
