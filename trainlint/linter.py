"""One scan: files -> runs -> findings, memory estimates and effective batches. No command-line
concerns live here (arguments, printing, exit codes): trainlint.api and the CLI own those."""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from trainlint.cache import FactCache
from trainlint.checks import CheckContext, Rule, all_rules
from trainlint.config import PerFileIgnore
from trainlint.core import (
    Diagnostic,
    DiagnosticKind,
    Finding,
    MemoryEstimate,
    Setting,
    SourceKind,
    TrainingRun,
    Unknown,
    Value,
)
from trainlint.knobs import K
from trainlint.memory import Gpu, find_gpu, gpu_from_memory
from trainlint.readers.pool import default_processes
from trainlint.readers.source import overlay_active, resolving_once
from trainlint.resolution import Scan, scan
from trainlint.resolution.batch import effective_batch
from trainlint.resolution.prefetch import Progress, prefetch
from trainlint.resolution.workspace import Workspace
from trainlint.resolution.world import UnknownNodes

DEFAULT_GPU = "a100-80gb"


class DiagnosticChannel(str, Enum):
    """Where a reader diagnostic that no rule owns reaches the user."""

    # Every reporter lists them: what trainlint could not read statically (and so did not check).
    UNREAD = "could not read statically"
    # The scan survived a failure of trainlint itself: said on stderr, exit code 2.
    INTERNAL_ERROR = "internal error"


CHANNEL_OF_KIND: Mapping[DiagnosticKind, DiagnosticChannel] = {
    DiagnosticKind.UNMODELLED_CONSTRUCT: DiagnosticChannel.UNREAD,
    DiagnosticKind.CONFIG_CALL_SPLAT: DiagnosticChannel.UNREAD,
    DiagnosticKind.UNANALYSABLE_PYTHON: DiagnosticChannel.UNREAD,
    DiagnosticKind.INTERNAL_ERROR: DiagnosticChannel.INTERNAL_ERROR,
}


def diagnostic_kind(kind: str) -> Optional[DiagnosticKind]:
    """The kind of a diagnostic (readers may write the plain string), or None for one this version does not know."""
    try:
        return DiagnosticKind(kind)
    except ValueError:
        return None


class TargetError(ValueError):
    """The GPU or its memory, as given, names no target to check against."""


@dataclass(frozen=True)
class Target:
    """The GPU to check against (`gpu_assumed`: the user named none) and the world size to assume."""

    gpu: Gpu
    gpu_assumed: bool
    num_gpus: Optional[int] = None
    # The global batch to keep when the launcher does not state its GPU count (`--global-batch`).
    global_batch: Optional[int] = None


def make_target(gpu: Optional[str] = None, gpu_memory: Optional[str] = None,
                num_gpus: Optional[int] = None) -> Target:
    if gpu and gpu_memory:
        raise TargetError("--gpu and --gpu-memory are exclusive")
    if gpu_memory:
        return Target(gpu_from_memory(parse_memory(gpu_memory)), False, num_gpus)
    if gpu:
        found = find_gpu(gpu)
        if found is None:
            raise TargetError(f"unknown GPU `{gpu}`; `trainlint gpus` lists the known ones, or use --gpu-memory 48GiB")
        return Target(found, False, num_gpus)
    return Target(find_gpu(DEFAULT_GPU), True, num_gpus)


def parse_memory(text: str) -> float:
    """`40GiB`, `40 GB`, `48g`, `80` -> GiB (GB is read as the marketing decimal unit)."""
    cleaned = text.strip().lower().replace(" ", "")
    for suffix, factor in (("gib", 1.0), ("gb", 1e9 / 2**30), ("g", 1.0), ("mib", 1 / 1024), ("", 1.0)):
        if cleaned.endswith(suffix):
            number = cleaned[: len(cleaned) - len(suffix)] if suffix else cleaned
            try:
                value = float(number) * factor
            except ValueError:
                continue
            if 0 < value < math.inf:
                return value
    raise TargetError(f"cannot read GPU memory `{text}` (try 40GiB)")


@dataclass(frozen=True)
class Selection:
    select: Tuple[str, ...] = ()
    ignore: Tuple[str, ...] = ()
    # Codes ignored in the files a glob matches.
    per_file_ignores: Tuple[PerFileIgnore, ...] = ()

    def allows(self, code: str) -> bool:
        chosen = not self.select or any(_matches(code, prefix) for prefix in self.select)
        return chosen and not any(_matches(code, prefix) for prefix in self.ignore)

    def allows_finding(self, finding: Finding) -> bool:
        return self.allows(finding.code) and not any(
            entry.ignores(finding.code, finding.path) for entry in self.per_file_ignores)


def _matches(code: str, prefix: str) -> bool:
    """`ALL` selects every code (as in ruff); anything else is a code prefix."""
    return prefix.upper() == "ALL" or code.startswith(prefix.upper())


@dataclass
class LintResult:
    scan: Scan
    findings: List[Finding] = field(default_factory=list)
    estimates: Dict[str, MemoryEstimate] = field(default_factory=dict)
    # Findings an inline `# trainlint: ignore` comment silenced.
    suppressed: List[Finding] = field(default_factory=list)
    # A rule or the estimate failed on one job: said, and the scan went on with the others.
    errors: List[str] = field(default_factory=list)
    # Run id -> per-device batch × accumulation × world size (Unknown saying which factor is missing).
    effective_batches: Dict[str, Value] = field(default_factory=dict)
    # What the jobs were checked against (the fixer plans ports onto it).
    target: Optional[Target] = None
    # What could not be read statically (DiagnosticChannel.UNREAD), once per place.
    unread: List[Diagnostic] = field(default_factory=list)


def _assume_world(run: TrainingRun, num_gpus: Optional[int]) -> TrainingRun:
    """`--num-gpus N` stands in for a world size the launcher does not state (and only then): not for one that
    spans an unknown number of machines, of which N GPUs are one machine's."""
    world = run.setting(K.WORLD_SIZE)
    if num_gpus is None or (world is not None and not isinstance(world.value, Unknown)):
        return run
    if world is not None and isinstance(world.value, UnknownNodes):
        return run
    assumed = Setting(num_gpus, SourceKind.ASSUMED, None, note="--num-gpus", via=(world,) if world else ())
    settings = dict(run.settings)
    settings[K.WORLD_SIZE] = assumed
    return replace(run, settings=settings)


def lint(paths: Sequence[Path], target: Target, selection: Selection = Selection(), exclude: Sequence[str] = (),
         preserve_effective_batch: bool = False, workspace: Optional[Workspace] = None,
         cache_dir: Optional[Path] = None, processes: Optional[int] = None,
         progress: Optional[Progress] = None) -> LintResult:
    """Scan `paths`, estimate and check every job against `target`, apply the inline suppressions
    and keep the findings `selection` allows. `cache_dir`: keep what the readers extract there between
    runs; `processes`: read the files of a cold scan in that many processes (default: every core);
    `progress(done, total)` is told as files are read ahead."""
    with resolving_once():
        return _lint(paths, target, selection, exclude, preserve_effective_batch, workspace, cache_dir, processes,
                     progress)


def _lint(paths: Sequence[Path], target: Target, selection: Selection, exclude: Sequence[str],
          preserve_effective_batch: bool, workspace: Optional[Workspace], cache_dir: Optional[Path],
          processes: Optional[int], progress: Optional[Progress]) -> LintResult:
    workspace = workspace or Workspace()
    if workspace.cache is None and cache_dir is not None:
        workspace.cache = FactCache.for_scan(cache_dir)
    # The tree is fixed before anything is read ahead, so a worker never reads what the scan would refuse.
    workspace.confine_to(paths)
    processes = default_processes() if processes is None else processes
    # Worker processes read the disk: contents `fix --diff` holds in memory are read here, in this process.
    if processes > 1 and not overlay_active():
        prefetch(paths, exclude, workspace, processes, progress)
    found = scan(paths, exclude, workspace)
    found.runs = [_assume_world(run, target.num_gpus) for run in found.runs]
    result = LintResult(found, target=target)
    if found.runs or found.diagnostics:
        _check(found, target, preserve_effective_batch, result)
    _apply_suppressions(result, selection)
    return result


def _check(found: Scan, target: Target, preserve_effective_batch: bool, result: LintResult) -> None:
    """Estimate and check every job of `found`, and turn the diagnostics a rule owns into its findings."""
    # Imported here: the estimate and the rules' modules (~40 ms) only once the scan found something to check.
    from trainlint.memory import estimate

    ctx = CheckContext(target.gpu, target.gpu_assumed, preserve_effective_batch=preserve_effective_batch,
                       num_gpus=target.num_gpus)
    # Every rule runs: whether a suppression is used must not depend on --select; the selection
    # filters afterwards.
    rules = list(all_rules())
    by_kind = {DiagnosticKind(kind): rule for rule in rules for kind in rule.diagnostic_kinds}
    for run in found.runs:
        result.effective_batches[run.id] = effective_batch(run)
        try:
            result.estimates[run.id] = estimate(run, target.gpu)
        except Exception as error:  # noqa: BLE001 - one job's failure must not end the scan
            result.errors.append(f"the memory estimate failed on {run.id}: {type(error).__name__}: {error}")
        for rule in rules:
            try:
                result.findings.extend(rule.check(run, ctx))
            except Exception as error:  # noqa: BLE001 - one rule's failure must not end the scan
                result.errors.append(f"{rule.code} failed on {run.id}: {type(error).__name__}: {error}")
        result.findings.extend(_from_diagnostics(run.diagnostics, by_kind, run))
        _route_to_channels(run.diagnostics, result)
    result.findings.extend(_from_diagnostics(found.diagnostics, by_kind, None))
    _route_to_channels(found.diagnostics, result)


def _route_to_channels(diagnostics: Sequence[Diagnostic], result: LintResult) -> None:
    """Diagnostics no rule owns go to their channel: the unread list, or the internal errors."""
    for diagnostic in diagnostics:
        kind = diagnostic_kind(diagnostic.kind)
        channel = CHANNEL_OF_KIND.get(kind) if kind is not None else DiagnosticChannel.UNREAD
        if channel is DiagnosticChannel.INTERNAL_ERROR:
            message = f"{diagnostic.path}: {diagnostic.message}"
            if message not in result.errors:
                result.errors.append(message)
        elif channel is DiagnosticChannel.UNREAD and not any(_same_place(diagnostic, seen) for seen in result.unread):
            result.unread.append(diagnostic)


def _same_place(one: Diagnostic, other: Diagnostic) -> bool:
    return (one.path, one.origin, one.message) == (other.path, other.origin, other.message)


def _apply_suppressions(result: LintResult, selection: Selection) -> None:
    files = [path for run in result.scan.runs for path in (run.path, *run.files, *run.configs)]
    if not result.findings and not files and not result.scan.scanned:
        return  # no finding to silence, no file that may hold a directive
    # Imported here: the suppressions read files through trainlint.formats (tree-sitter, ~10 ms).
    from trainlint.suppressions import apply_suppressions

    runs = {run.id: run for run in result.scan.runs}
    applied = apply_suppressions(_dedupe(result.findings, runs), [*result.scan.scanned, *files])
    result.suppressed = [finding for finding, _ in applied.suppressed]
    result.findings = _dedupe([f for f in applied.findings + applied.unused if selection.allows_finding(f)], runs)


def _fix_places(finding: Finding, run: Optional[TrainingRun]) -> Tuple:
    """What tells the fixes of one launch's findings apart: its job, unless several jobs run the launch (a script
    run by wrappers with their own arguments) and the fix would make the same changes at the same places (for each
    knob, the whole chain of places the value is written at, the literal last)."""
    if not finding.fix or not finding.fix.changes:
        return ()
    if run is None or run.origin is None:
        return (finding.run_id,)
    places: List[Tuple] = [(run.origin,)]
    for change in finding.fix.changes:
        setting = run.setting(change.knob)
        chain = tuple(upstream.origin for upstream in setting.chain()) if setting is not None else ()
        if not any(chain):
            return (finding.run_id,)
        places.append((change.knob, repr(change.old), repr(change.new), chain))
    return tuple(places)


def _from_diagnostics(diagnostics: Sequence[Diagnostic], by_kind: Mapping[str, Rule],
                      run: Optional[TrainingRun]) -> List[Finding]:
    out = []
    for diagnostic in diagnostics:
        kind = diagnostic_kind(diagnostic.kind)
        rule = by_kind.get(kind) if kind is not None else None
        if rule is not None:
            out.append(rule.from_diagnostic(diagnostic, run))
    return out


def _dedupe(findings: List[Finding], runs: Mapping[str, TrainingRun]) -> List[Finding]:
    """A file shared by several runs reports its own problems once, and so does a launch several callers run (a
    script run by wrappers, `bash finetune.sh "$MODEL"`) when the fix would edit the same places for each."""
    seen = set()
    out = []
    # The launch's own job first: of the jobs that share a finding, it is the one whose fix may edit the launch.
    ordered = sorted(findings, key=lambda f: (runs[f.run_id].called_by is not None) if f.run_id in runs else False)
    for finding in ordered:
        origin = finding.origin
        key = (finding.code, finding.path, origin.start_byte if origin else None, finding.message,
               _fix_places(finding, runs.get(finding.run_id or "")))
        if key in seen:
            continue
        seen.add(key)
        out.append(finding)
    return sorted(out, key=lambda f: (f.path, f.origin.line if f.origin else 0, f.origin.column if f.origin else 0,
                                      f.code))
