"""One scan: files -> runs -> findings, memory estimates and effective batches. No command-line
concerns live here (arguments, printing, exit codes): trainlint.api and the CLI own those."""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from trainlint.cache import FactCache
from trainlint.checks import CheckContext, Rule, all_rules
from trainlint.config import PerFileIgnore
from trainlint.core import (
    Diagnostic,
    Finding,
    MemoryEstimate,
    Setting,
    SourceKind,
    TrainingRun,
    Unknown,
    Value,
)
from trainlint.memory import Gpu, estimate, find_gpu, gpu_from_memory
from trainlint.readers.pool import default_processes
from trainlint.resolution import Scan, scan
from trainlint.resolution.batch import effective_batch
from trainlint.resolution.prefetch import Progress, prefetch
from trainlint.resolution.workspace import Workspace
from trainlint.suppressions import apply_suppressions

DEFAULT_GPU = "a100-80gb"


class TargetError(ValueError):
    """The GPU or its memory, as given, names no target to check against."""


@dataclass(frozen=True)
class Target:
    """The GPU to check against (`gpu_assumed`: the user named none) and the world size to assume."""

    gpu: Gpu
    gpu_assumed: bool
    num_gpus: Optional[int] = None


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
        chosen = not self.select or any(code.startswith(prefix.upper()) for prefix in self.select)
        return chosen and not any(code.startswith(prefix.upper()) for prefix in self.ignore)

    def allows_finding(self, finding: Finding) -> bool:
        return self.allows(finding.code) and not any(
            entry.ignores(finding.code, finding.path) for entry in self.per_file_ignores)


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


def _assume_world(run: TrainingRun, num_gpus: Optional[int]) -> TrainingRun:
    """`--num-gpus N` stands in for a world size the launcher does not state (and only then)."""
    world = run.setting("world_size")
    if num_gpus is None or (world is not None and not isinstance(world.value, Unknown)):
        return run
    assumed = Setting(num_gpus, SourceKind.ASSUMED, None, note="--num-gpus", via=(world,) if world else ())
    settings = dict(run.settings)
    settings["world_size"] = assumed
    return replace(run, settings=settings)


def lint(paths: Sequence[Path], target: Target, selection: Selection = Selection(), exclude: Sequence[str] = (),
         preserve_effective_batch: bool = False, workspace: Optional[Workspace] = None,
         cache_dir: Optional[Path] = None, processes: Optional[int] = None,
         progress: Optional[Progress] = None) -> LintResult:
    """Scan `paths`, estimate and check every job against `target`, apply the inline suppressions
    and keep the findings `selection` allows. `cache_dir`: keep what the readers extract there between
    runs; `processes`: read the files of a cold scan in that many processes (default: every core);
    `progress(done, total)` is told as files are read ahead."""
    workspace = workspace or Workspace(cache=FactCache(cache_dir) if cache_dir is not None else None)
    processes = default_processes() if processes is None else processes
    if processes > 1:
        prefetch(paths, exclude, workspace, processes, progress)
    found = scan(paths, exclude, workspace)
    found.runs = [_assume_world(run, target.num_gpus) for run in found.runs]
    result = LintResult(found)
    ctx = CheckContext(target.gpu, target.gpu_assumed, preserve_effective_batch=preserve_effective_batch)
    # Every rule runs: whether a suppression is used must not depend on --select; the selection
    # filters afterwards.
    rules = list(all_rules())
    by_kind = {kind: rule for rule in rules for kind in rule.diagnostic_kinds}
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
    result.findings.extend(_from_diagnostics(found.diagnostics, by_kind, None))
    _apply_suppressions(result, selection)
    return result


def _apply_suppressions(result: LintResult, selection: Selection) -> None:
    files = [path for run in result.scan.runs for path in (run.path, *run.files, *run.configs)]
    applied = apply_suppressions(_dedupe(result.findings), [*result.scan.scanned, *files])
    result.suppressed = [finding for finding, _ in applied.suppressed]
    result.findings = _dedupe([f for f in applied.findings + applied.unused if selection.allows_finding(f)])


def _from_diagnostics(diagnostics: Sequence[Diagnostic], by_kind: Mapping[str, Rule],
                      run: Optional[TrainingRun]) -> List[Finding]:
    out = []
    for diagnostic in diagnostics:
        rule = by_kind.get(diagnostic.kind)
        if rule is not None:
            out.append(rule.from_diagnostic(diagnostic, run))
    return out


def _dedupe(findings: List[Finding]) -> List[Finding]:
    """A file shared by several runs reports its own problems once."""
    seen = set()
    out = []
    for finding in findings:
        origin = finding.origin
        key = (finding.code, finding.path, origin.start_byte if origin else None, finding.message,
               finding.run_id if finding.fix and finding.fix.changes else None)
        if key in seen:
            continue
        seen.add(key)
        out.append(finding)
    return sorted(out, key=lambda f: (f.path, f.origin.line if f.origin else 0, f.origin.column if f.origin else 0,
                                      f.code))
