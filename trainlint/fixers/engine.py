"""`trainlint fix`: plan edits for the findings, apply the ones that do not collide, write every file
atomically, re-read the whole job, and repeat until nothing applicable is left."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from trainlint.core import Applicability, Finding, Setting, SourceKind, TrainingRun, Unknown, Value
from trainlint.fixers.atomic import write_all, write_atomically
from trainlint.fixers.edits import apply_edits, by_path, collides_with_any, unified_diff
from trainlint.fixers.planner import PlannedFix, Planner, planned_finding
from trainlint.fixers.verify import broken_by_edits
from trainlint.linter import LintResult
from trainlint.readers.source import display_path
from trainlint.resolution.batch import effective_batch

MAX_ROUNDS = 10
_RANK = {Applicability.SAFE: 0, Applicability.UNSAFE: 1, Applicability.DISPLAY_ONLY: 2}

Writer = Callable[[Path, bytes], None]
RunKey = Tuple[str, int]  # (launcher path, ordinal of the run in that file): stable when lines move


# ------------------------------------------------------------------ planning
def plan_fixes(result: LintResult, unsafe: bool) -> List[PlannedFix]:
    """A plan for every finding that carries a fix, those that would be applied first (safe ones,
    then unsafe ones when `unsafe`), so that when two collide the safer one wins."""
    planner = Planner(result)
    plans = [plan for plan in (planner.plan(f) for f in result.findings) if plan is not None]
    return sorted(plans, key=lambda p: (not p.applies(unsafe), _RANK[p.applicability]))


def with_planned_edits(result: LintResult) -> List[Finding]:
    """The findings of `result` with `edits` filled by the plan for their fix (for `check` output)."""
    planner = Planner(result)
    out = []
    for finding in result.findings:
        plan = planner.plan(finding) if finding.fix is not None else None
        out.append(planned_finding(plan) if plan is not None else finding)
    return out


def choose(plans: Sequence[PlannedFix], unsafe: bool) -> List[PlannedFix]:
    """The applicable plans whose edits do not collide with an earlier chosen one, and at most one
    knob-changing fix per job: a rule chose its values from the job as it was (TL101's micro-batch
    assumes checkpointing stays off), so the next fix is planned again against the re-read job.
    The others wait for the next round."""
    chosen: List[PlannedFix] = []
    accepted = []
    jobs_changed = set()
    for plan in plans:
        if not plan.applies(unsafe) or collides_with_any(plan.edits, accepted):
            continue
        changes_knobs = plan.finding.fix is not None and bool(plan.finding.fix.changes)
        if changes_knobs and plan.finding.run_id in jobs_changed:
            continue
        if changes_knobs:
            jobs_changed.add(plan.finding.run_id)
        chosen.append(plan)
        accepted.extend(plan.edits)
    return chosen


@dataclass
class Rewrite:
    """New contents for the files a set of plans touches, and the plans left out because their
    result would not parse."""

    contents: Dict[Path, bytes] = field(default_factory=dict)
    originals: Dict[Path, bytes] = field(default_factory=dict)
    plans: List[PlannedFix] = field(default_factory=list)
    rejected: List[Tuple[PlannedFix, str]] = field(default_factory=list)


def rewrite(plans: Sequence[PlannedFix]) -> Rewrite:
    """Apply the plans in memory. A plan that breaks the syntax of a file it touches is dropped with
    every plan sharing that file, and the rest is computed again."""
    remaining = list(plans)
    rejected: List[Tuple[PlannedFix, str]] = []
    while True:
        out = Rewrite(plans=list(remaining), rejected=list(rejected))
        broken: Dict[str, str] = {}
        for path, edits in by_path(e for plan in remaining for e in plan.edits).items():
            original = Path(path).read_bytes()
            updated = apply_edits(original, edits)
            problem = broken_by_edits(path, original, updated)
            if problem:
                broken[path] = problem
            elif updated != original:
                out.contents[Path(path)] = updated
                out.originals[Path(path)] = original
        if not broken:
            return out
        for plan in list(remaining):
            hit = [broken[e.origin.path] for e in plan.edits if e.origin.path in broken]
            if hit:
                remaining.remove(plan)
                rejected.append((plan, hit[0]))


# ------------------------------------------------------------------ the loop
@dataclass
class FixOutcome:
    applied: List[PlannedFix] = field(default_factory=list)
    # The plans applied in each round, in order (each round's edits name the bytes of the round before).
    history: List[List[PlannedFix]] = field(default_factory=list)
    # Plans of the last lint that were not applied: unsafe without --unsafe-fixes, display-only.
    left: List[PlannedFix] = field(default_factory=list)
    rejected: List[Tuple[PlannedFix, str]] = field(default_factory=list)
    files_changed: List[str] = field(default_factory=list)
    before: Dict[RunKey, Tuple[TrainingRun, Value]] = field(default_factory=dict)
    after: Dict[RunKey, Tuple[TrainingRun, Value]] = field(default_factory=dict)
    diff: str = ""
    error: Optional[str] = None
    rounds: int = 0
    result: Optional[LintResult] = None  # the last lint


def _effective_batches(result: LintResult) -> Dict[RunKey, Tuple[TrainingRun, Value]]:
    out: Dict[RunKey, Tuple[TrainingRun, Value]] = {}
    seen: Dict[str, int] = {}
    for run in sorted(result.scan.runs, key=lambda r: (r.path, r.origin.start_byte if r.origin else 0)):
        ordinal = seen.get(run.path, 0)
        seen[run.path] = ordinal + 1
        out[(run.path, ordinal)] = (run, effective_batch(run))
    return out


def _predicted_batches(before: Dict[RunKey, Tuple[TrainingRun, Value]],
                       plans: Sequence[PlannedFix]) -> Dict[RunKey, Tuple[TrainingRun, Value]]:
    """The effective batches the plans would give, from their knob changes (nothing is re-read)."""
    out = {}
    for key, (run, _batch) in before.items():
        settings = dict(run.settings)
        for plan in plans:
            if plan.finding.run_id == run.id and plan.finding.fix is not None:
                for change in plan.finding.fix.changes:
                    settings[change.knob] = Setting(change.new, SourceKind.DERIVED, None, note="planned")
        changed = replace(run, settings=settings)
        out[key] = (changed, effective_batch(changed))
    return out


def _syntax_findings(result: LintResult, paths: Sequence[str]) -> int:
    return sum(1 for f in result.findings if f.code == "TL001" and f.path in paths)


def _job_problem(before: LintResult, after: LintResult, touched: Sequence[str], preserve: bool,
                 plans: Sequence[PlannedFix]) -> Optional[str]:
    """What went wrong with the whole job after writing, judged by reading it again."""
    if _syntax_findings(after, touched) > _syntax_findings(before, touched):
        return "a rewritten file no longer parses"
    old, new = _effective_batches(before), _effective_batches(after)
    for key, (run, _batch) in old.items():
        if key not in new:
            return f"the job at {run.id} is no longer found after the edits"
    if not preserve:
        return None
    unsafe_runs = {p.finding.run_id for p in plans if p.applicability != Applicability.SAFE}
    for key, (run, batch) in old.items():
        if run.id in unsafe_runs or run.setting("global_batch_size") is not None:
            continue
        later = new[key][1]
        if not isinstance(batch, Unknown) and not isinstance(later, Unknown) and batch != later:
            return f"the effective batch of {run.id} would change from {batch} to {later}"
    return None


class FixSession:
    """One `trainlint fix`: lint, plan, apply, re-read, until a fixpoint."""

    def __init__(self, lint: Callable[[], LintResult], unsafe: bool, preserve: bool,
                 writer: Writer = write_atomically, max_rounds: int = MAX_ROUNDS) -> None:
        self.lint = lint
        self.unsafe = unsafe
        self.preserve = preserve
        self.writer = writer
        self.max_rounds = max_rounds

    def run(self) -> FixOutcome:
        outcome = FixOutcome()
        result = self.lint()
        outcome.before = _effective_batches(result)
        changed: List[str] = []
        for _ in range(self.max_rounds):
            chosen = choose(plan_fixes(result, self.unsafe), self.unsafe)
            if not chosen:
                break
            pending = rewrite(chosen)
            outcome.rejected.extend(pending.rejected)
            if not pending.contents:
                break
            try:
                write_all(pending.contents, self.writer)
            except OSError as error:
                outcome.error = f"could not write the fixes, every file was left as it was: {error}"
                break
            outcome.rounds += 1
            fresh = self.lint()
            touched = [display_path(p) for p in pending.contents]
            problem = _job_problem(result, fresh, touched, self.preserve, pending.plans)
            if problem is not None:
                write_all(pending.originals)
                outcome.error = f"the fixes were undone: {problem}"
                result = self.lint()
                break
            outcome.applied.extend(pending.plans)
            outcome.history.append(list(pending.plans))
            changed.extend(t for t in touched if t not in changed)
            result = fresh
        outcome.files_changed = sorted(changed)
        outcome.result = result
        outcome.after = _effective_batches(result)
        outcome.left = plan_fixes(result, self.unsafe)
        return outcome

    def preview(self) -> FixOutcome:
        """The first round as a unified diff; nothing is written."""
        outcome = FixOutcome()
        result = self.lint()
        outcome.before = _effective_batches(result)
        plans = plan_fixes(result, self.unsafe)
        pending = rewrite(choose(plans, self.unsafe))
        outcome.applied = pending.plans if pending.contents else []
        outcome.after = _predicted_batches(outcome.before, outcome.applied)
        outcome.rejected = pending.rejected
        outcome.files_changed = sorted(display_path(p) for p in pending.contents)
        outcome.diff = "".join(unified_diff(display_path(p), pending.originals[p], pending.contents[p])
                               for p in sorted(pending.contents))
        applied_ids = {id(p.finding) for p in outcome.applied}
        outcome.left = [p for p in plans if id(p.finding) not in applied_ids]
        outcome.result = result
        return outcome
