"""`trainlint fix`: plan edits for the findings, apply the ones that do not collide, write every file
of a round in one transaction (all or nothing, see `trainlint.fixers.transaction`), re-read the whole
job, and repeat until nothing applicable is left. `--diff` runs the same rounds on contents held in
memory and shows the final diff."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

from trainlint.checks.tl304_broken_line_continuation import BrokenLineContinuation
from trainlint.core import Applicability, Finding, Isolation, Severity, TrainingRun, Unknown, Value
from trainlint.fixers.edits import apply_edits, by_path, collides_with_any, unified_diff
from trainlint.fixers.journal import recover_locked
from trainlint.fixers.lock import TreeBusy, TreeLock
from trainlint.fixers.planner import PlannedFix, Planner, planned_finding
from trainlint.fixers.transaction import (
    FileChange,
    FixInterrupted,
    FixRefused,
    Transaction,
    interruptible,
    signals_held,
)
from trainlint.fixers.verify import broken_by_edits
from trainlint.knobs import K
from trainlint.linter import LintResult
from trainlint.memory.plans import launcher_gpu_count
from trainlint.readers.source import display_path, reading_overlay, safe_resolve
from trainlint.resolution.batch import effective_batch
from trainlint.resolution.workspace import file_stamp, tree_roots

MAX_ROUNDS = 10

RunKey = Tuple[str, int]  # (launcher path, ordinal of the run in that file): stable when lines move
Reader = Callable[[str], Optional[bytes]]


def read_disk(path: str) -> Optional[bytes]:
    try:
        return Path(path).read_bytes()
    except OSError:
        return None


# ------------------------------------------------------------------ planning
def _planner(result: LintResult, read: Optional[Reader], edited: FrozenSet[Path] = frozenset()) -> Planner:
    planner = Planner(result, edited)
    if read is not None:
        planner.read = read  # the files as this round sees them (in memory under --diff)
    return planner


def plan_fixes(result: LintResult, unsafe: bool, read: Optional[Reader] = None,
               edited: FrozenSet[Path] = frozenset()) -> List[PlannedFix]:
    """A plan for every finding that carries a fix, those that would be applied first (safe ones,
    then unsafe ones when `unsafe`), so that when two collide the safer one wins. `edited`: the files earlier
    rounds of this fix rewrote in place (resolved)."""
    planner = _planner(result, read, edited)
    plans = [plan for plan in (planner.plan(f) for f in result.findings) if plan is not None]
    return sorted(plans, key=lambda p: (not p.applies(unsafe), -p.applicability.rank))


def with_planned_edits(result: LintResult) -> List[Finding]:
    """The findings of `result` with their fix's edits planned (for `check` output)."""
    planner = Planner(result)
    out = []
    for finding in result.findings:
        plan = planner.plan(finding) if finding.fix is not None else None
        out.append(planned_finding(plan) if plan is not None else finding)
    return out


def choose(plans: Sequence[PlannedFix], unsafe: bool) -> List[PlannedFix]:
    """The applicable plans whose edits do not collide with an earlier chosen one, and at most one fix
    isolated per job (`Isolation.JOB`) for each job. The others wait for the next round. A job whose command a
    broken line continuation cuts short gets no other fix: the others are planned on the command as cut short,
    not on the one its author wrote (a micro-batch inserted beside the one the repair brings back). Its repair
    (an unsafe fix) goes alone in its round, and the others are planned again on the repaired command."""
    chosen: List[PlannedFix] = []
    accepted = []
    jobs_changed = set()
    repaired = {plan.finding.run_id for plan in plans
                if plan.code == BrokenLineContinuation.code and plan.finding.run_id}
    for plan in plans:
        if not plan.applies(unsafe) or collides_with_any(plan.edits, accepted):
            continue
        if plan.finding.run_id in repaired and plan.code != BrokenLineContinuation.code:
            continue
        one_per_job = plan.finding.fix is not None and plan.finding.fix.isolation == Isolation.JOB
        if one_per_job and plan.finding.run_id in jobs_changed:
            continue
        if one_per_job:
            jobs_changed.add(plan.finding.run_id)
        chosen.append(plan)
        accepted.extend(plan.edits)
    return chosen


@dataclass
class Rewrite:
    """New contents for the files a set of plans touches, and the plans left out because their
    result would not parse. An original of None: the plans create the file."""

    contents: Dict[Path, bytes] = field(default_factory=dict)
    originals: Dict[Path, Optional[bytes]] = field(default_factory=dict)
    plans: List[PlannedFix] = field(default_factory=list)
    rejected: List[Tuple[PlannedFix, str]] = field(default_factory=list)


def rewrite(plans: Sequence[PlannedFix], read: Reader = read_disk) -> Rewrite:
    """Apply the plans in memory. A plan that breaks the syntax of a file it touches is dropped with
    every plan sharing that file, and the rest is computed again."""
    remaining = list(plans)
    rejected: List[Tuple[PlannedFix, str]] = []
    while True:
        out = Rewrite(plans=list(remaining), rejected=list(rejected))
        broken: Dict[str, str] = {}
        for path, edits in by_path(e for plan in remaining for e in plan.edits).items():
            original = read(path)
            creates = any(edit.creates for edit in edits)
            if creates and original is not None:
                broken[path] = f"{path} already exists"
                continue
            if original is None and not creates:
                broken[path] = f"{path} can no longer be read"
                continue
            updated = apply_edits(original or b"", edits)
            problem = broken_by_edits(path, original or b"", updated)
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
    files_created: List[str] = field(default_factory=list)  # among files_changed: those the fix created
    before: Dict[RunKey, Tuple[TrainingRun, Value]] = field(default_factory=dict)
    after: Dict[RunKey, Tuple[TrainingRun, Value]] = field(default_factory=dict)
    diff: str = ""
    error: Optional[str] = None
    # What the fix noticed on the way (an interrupted earlier fix it settled first).
    notes: List[str] = field(default_factory=list)
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


def _syntax_findings(result: LintResult, paths: Sequence[str]) -> int:
    return sum(1 for f in result.findings if f.code == "TL001" and f.path in paths)


# Errors that stop a launch before it trains: a flag the entry point refuses, a value it cannot take, a file it names
# that is not there. A fix that adds one breaks the job it meant to port.
_LAUNCH_ERRORS = ("TL302", "TL303", "TL305")


def _launch_errors(result: LintResult) -> Counter:
    return Counter(f.code for f in result.findings if f.code in _LAUNCH_ERRORS and f.severity == Severity.ERROR)


def _job_problem(before: LintResult, after: LintResult, touched: Sequence[str], preserve: bool,
                 plans: Sequence[PlannedFix]) -> Optional[str]:
    """What went wrong with the whole job after writing, judged by reading it again."""
    if _syntax_findings(after, touched) > _syntax_findings(before, touched):
        return "a rewritten file no longer parses"
    # Settings the round wrote: a flag or value of its own making that the entry point refuses. (A text repair, such as
    # joining the lines a comment cut off a command, may bring to light flags the script never took: those are the
    # launcher's own, and the repair goes ahead.)
    writes_settings = any(plan.finding.fix is not None and plan.finding.fix.changes for plan in plans)
    added = _launch_errors(after) - _launch_errors(before) if writes_settings else Counter()
    if added:
        first = next(f for f in after.findings if f.code in added and f.severity == Severity.ERROR)
        return f"a job would stop at start ({first.code} at {first.origin or first.path}: {first.message})"
    old, new = _effective_batches(before), _effective_batches(after)
    for key, (run, _batch) in old.items():
        if key not in new:
            return f"the job at {run.id} is no longer found after the edits"
    if not preserve:
        return None
    unsafe_runs = {p.finding.run_id for p in plans if p.applicability != Applicability.SAFE}
    # `--global-batch B` names the global batch to keep for a launcher that states no GPU count: the
    # job's batch before the fix was only the per-device product times the GPUs assumed.
    wanted = before.target.global_batch if before.target is not None else None
    for key, (run, batch) in old.items():
        if run.id in unsafe_runs or run.setting(K.GLOBAL_BATCH_SIZE) is not None:
            continue
        if wanted is not None and _states_no_gpu_count(run):
            batch = wanted
        later = new[key][1]
        if not isinstance(batch, Unknown) and not isinstance(later, Unknown) and batch != later:
            return f"the effective batch of {run.id} would change from {batch} to {later}"
    return None


def _states_no_gpu_count(run: TrainingRun) -> bool:
    """The launcher states no GPU count (a bare `deepspeed`, every visible GPU): its world size is --num-gpus."""
    return launcher_gpu_count(run) is None


def _rewritten_in_place(originals: Dict[Path, Optional[bytes]]) -> Set[Path]:
    """The files of a round that were there before it (resolved). A file the round created is not among them: it is
    a job's own copy of a config, named after what it holds, which a later round may take as another job's sibling
    config as a second `fix` would; a config rewritten in place holds what was planned for other jobs under a name
    that may no longer say so (a `zero2.json` at stage 3)."""
    return {safe_resolve(path) for path, data in originals.items() if data is not None}


class _MemoryFiles:
    """`--diff`: every round's contents held in memory (None: a file created, then removed again); the lint reads
    them through an overlay."""

    def __init__(self) -> None:
        self.contents: Dict[Path, Optional[bytes]] = {}
        self.rewritten: Set[Path] = set()  # resolved: the files earlier rounds rewrote in place

    def read(self, path: str) -> Optional[bytes]:
        held = self.contents.get(safe_resolve(path))
        return held if held is not None else read_disk(path)

    def lint(self, lint: Callable[[], LintResult]) -> LintResult:
        with reading_overlay(self.contents):
            return lint()

    def plan(self, result: LintResult, unsafe: bool) -> List[PlannedFix]:
        with reading_overlay(self.contents):  # the planner re-reads launchers too
            return plan_fixes(result, unsafe, self.read, frozenset(self.rewritten))

    def commit(self, contents: Dict[Path, Optional[bytes]], originals: Dict[Path, Optional[bytes]],
               scan_stamps) -> None:
        for path, data in contents.items():
            self.contents[safe_resolve(path)] = data
        self.rewritten.update(_rewritten_in_place(originals))

    def close(self) -> None:
        pass


class _DiskFiles:
    """`fix`: each round is one transaction under the tree's lock (taken at the first write, held
    until the fix ends; an interrupted fix found under it is settled first)."""

    def __init__(self, roots: Optional[Sequence[Path]], lock_wait: float) -> None:
        self.roots = list(roots) if roots else None
        self.lock_wait = lock_wait
        self.lock: Optional[TreeLock] = None
        self.notes: List[str] = []
        self.rewritten: Set[Path] = set()  # resolved: the files earlier rounds rewrote in place

    read = staticmethod(read_disk)

    @staticmethod
    def lint(lint: Callable[[], LintResult]) -> LintResult:
        return lint()

    def plan(self, result: LintResult, unsafe: bool) -> List[PlannedFix]:
        return plan_fixes(result, unsafe, read_disk, frozenset(self.rewritten))

    def _tree(self, paths: Sequence[Path]) -> List[Path]:
        if self.roots is None:
            self.roots = tree_roots(list(paths), Path.cwd().resolve())
        return self.roots

    def commit(self, contents: Dict[Path, Optional[bytes]], originals: Dict[Path, Optional[bytes]],
               scan_stamps) -> None:
        """Write `contents` (None: remove the file) over `originals` (None: the file does not exist yet)."""
        roots = self._tree(list(contents))
        for path in contents:
            stamp = scan_stamps.get(safe_resolve(path))
            if stamp is not None and _stamp_or_none(path) != stamp:
                raise FixRefused(f"{display_path(path)} changed since trainlint read it")
        if self.lock is None:
            lock = TreeLock(roots[0], wait_seconds=self.lock_wait)
            lock.acquire()
            self.lock = lock
            self.notes.extend(recover_locked(roots[0]))
        Transaction(roots[0], roots).apply(
            [FileChange(path, originals[path], data) for path, data in contents.items()])
        self.rewritten.update(_rewritten_in_place(originals))

    def close(self) -> None:
        if self.lock is not None:
            self.lock.release()
            self.lock = None


def _stamp_or_none(path: Path):
    try:
        return file_stamp(path)
    except OSError:
        return None


class FixSession:
    """One `trainlint fix`: lint, plan, apply, re-read, until a fixpoint. `roots`: the scanned trees
    (only files inside them are written; the journal and lock live at the first); by default the
    tree of the files being fixed."""

    def __init__(self, lint: Callable[[], LintResult], unsafe: bool, preserve: bool,
                 max_rounds: int = MAX_ROUNDS, roots: Optional[Sequence[Path]] = None,
                 lock_wait: float = 3.0) -> None:
        self.lint = lint
        self.unsafe = unsafe
        self.preserve = preserve
        self.max_rounds = max_rounds
        self.roots = roots
        self.lock_wait = lock_wait

    def run(self) -> FixOutcome:
        files = _DiskFiles(self.roots, self.lock_wait)
        try:
            with interruptible():
                return self._rounds(files, FixOutcome())
        finally:
            files.close()

    def preview(self) -> FixOutcome:
        """Every round, in memory: the final diff; nothing is written."""
        files = _MemoryFiles()
        outcome = self._rounds(files, FixOutcome())
        originals = self._first_originals
        outcome.diff = "".join(
            unified_diff(display_path(path), originals[path], files.contents[safe_resolve(path)])
            for path in sorted(originals) if files.contents.get(safe_resolve(path)) != originals[path])
        return outcome

    def _rounds(self, files, outcome: FixOutcome) -> FixOutcome:
        result = files.lint(self.lint)
        outcome.before = _effective_batches(result)
        changed: List[str] = []
        # The bytes of every file before the fix touched it (None: one it created), for a rollback and for the diff.
        self._first_originals: Dict[Path, Optional[bytes]] = {}
        current: Dict[Path, Optional[bytes]] = {}
        try:
            for _ in range(self.max_rounds):
                chosen = choose(files.plan(result, self.unsafe), self.unsafe)
                if not chosen:
                    break
                pending = rewrite(chosen, files.read)
                outcome.rejected.extend(pending.rejected)
                if not pending.contents:
                    break
                files.commit(pending.contents, pending.originals, result.scan.stamps)
                for path in pending.contents:
                    self._first_originals.setdefault(path, pending.originals[path])
                    current[path] = pending.contents[path]
                outcome.rounds += 1
                fresh = files.lint(self.lint)
                touched = [display_path(p) for p in pending.contents]
                problem = _job_problem(result, fresh, touched, self.preserve, pending.plans)
                if problem is not None:
                    files.commit(pending.originals, pending.contents, {})
                    current.update(pending.originals)
                    outcome.error = f"the fixes were undone: {problem}"
                    result = files.lint(self.lint)
                    break
                outcome.applied.extend(pending.plans)
                outcome.history.append(list(pending.plans))
                changed.extend(t for t in touched if t not in changed)
                result = fresh
        except (FixRefused, TreeBusy, OSError, FixInterrupted) as failure:
            self._abandon(files, outcome, current, failure)
            changed = []
            result = files.lint(self.lint)
        except Exception as failure:
            # A fault of trainlint's own after a round was written: the edits were never checked, so they go too.
            self._abandon(files, outcome, current, failure)
            raise
        outcome.files_changed = sorted(changed)
        created = {display_path(path) for path, first in self._first_originals.items() if first is None}
        outcome.files_created = [path for path in outcome.files_changed if path in created]
        outcome.result = result
        outcome.after = _effective_batches(result)
        outcome.left = files.plan(result, self.unsafe)
        notes = getattr(files, "notes", [])
        if notes and outcome.error is None:
            outcome.notes = list(notes)
        return outcome

    def _abandon(self, files, outcome: FixOutcome, current: Dict[Path, Optional[bytes]],
                 failure: BaseException) -> None:
        """Put back every file earlier rounds changed, and say why nothing was written."""
        restore = {path: self._first_originals[path] for path, data in current.items()
                   if data != self._first_originals[path]}
        undone = ""
        if restore:
            try:
                with signals_held():
                    files.commit(restore, {path: current[path] for path in restore}, {})
                undone = " (earlier rounds were rolled back too)"
            except (FixRefused, TreeBusy, OSError) as error:
                undone = f" (earlier rounds could not be rolled back: {error})"
        outcome.applied, outcome.history = [], []
        if isinstance(failure, FixInterrupted):
            outcome.error = (f"interrupted by {failure.signal_name}: the fix was rolled back, every file is as it "
                             f"was{undone}")
        elif isinstance(failure, (FixRefused, TreeBusy)):
            outcome.error = f"the fix was abandoned and nothing was written: {failure}{undone}"
        else:
            outcome.error = f"could not write the fixes, every file was left as it was: {failure}{undone}"
