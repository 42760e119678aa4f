"""The library API: what `trainlint check`, `fix`, `show` and `estimate` compute, without a command line.

    from trainlint import api
    from trainlint.report import render

    result = api.lint(["scripts/finetune.sh"], api.load_settings(["scripts"], gpu="a100-40gb"))
    for finding in result.findings:
        print(finding.path, finding.code, finding.message)
    print(render(result.report, "concise"))
    raise SystemExit(result.exit_code)

Settings come from `load_settings`: the project configuration (the nearest trainlint.toml, or
pyproject.toml with `[tool.trainlint]`, from the first path upwards) overridden by its keyword
arguments, as the command line overrides it. Every function raises `UsageError` for a request that
cannot be carried out (an unknown GPU, a broken configuration, an unreadable baseline, a git error
in changed-files mode); a rule that fails on one job does not raise, it is listed in `errors`.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from enum import IntEnum
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Callable, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from trainlint.cache import default_cache_dir
from trainlint.config import ConfigError, Settings, fails, resolve_settings

# The scan's modules (parsers, resolution, memory, rules, planner) are imported where they are used: a
# check answered from the result cache (trainlint.results) needs none of them, and they take most of a
# warm check's time to import.
if TYPE_CHECKING:
    from trainlint.changed import ChangedLines
    from trainlint.core import Diagnostic, Finding, MemoryEstimate, Report, TrainingRun, Value
    from trainlint.fixers.engine import FixOutcome
    from trainlint.linter import LintResult, Selection, Target
    from trainlint.memory import Gpu, Suggestion
    from trainlint.memory.plans import PortPlan

PathLike = Union[str, "os.PathLike[str]"]

__all__ = [
    "CheckResult",
    "EstimateResult",
    "ExitCode",
    "FixResult",
    "ScanOptions",
    "UsageError",
    "estimate",
    "fix",
    "lint",
    "load_settings",
    "write_baseline",
]


class ExitCode(IntEnum):
    """The process exit codes of every command."""

    CLEAN = 0  # nothing at or above the failing severity
    FINDINGS = 1  # findings at or above the failing severity (or, for `fix --diff`, edits to make)
    ERROR = 2  # a usage, configuration or internal error


class UsageError(Exception):
    """A request that cannot be carried out as given (ExitCode.ERROR)."""


# --- settings ----------------------------------------------------------------------------------

def load_settings(paths: Sequence[PathLike] = (), *, config: Optional[PathLike] = None, isolated: bool = False,
                  select: Sequence[str] = (), ignore: Sequence[str] = (), exclude: Sequence[str] = (),
                  gpu: Optional[str] = None, gpu_memory: Optional[str] = None, num_gpus: Optional[int] = None,
                  fail_on: Optional[str] = None, extend_select: Sequence[str] = (), extend_ignore: Sequence[str] = (),
                  respect_gitignore: bool = True, allow_outside_reads: bool = False,
                  cache_dir: Optional[PathLike] = None) -> Settings:
    """The configuration file (`config`, or the one found from the first of `paths`, or none when
    `isolated`) merged with the keyword arguments; an argument left at its default does not override.
    `ignore` and `extend_ignore` add to the configured ignores, `extend_select` to the configured
    selection (`select` replaces it; `ALL` selects every rule)."""
    request = SimpleNamespace(
        paths=[Path(path) for path in paths], config=Path(config) if config is not None else None,
        isolated=isolated, select=list(select), ignore=list(ignore), exclude=list(exclude), gpu=gpu,
        gpu_memory=gpu_memory, num_gpus=num_gpus, fail_on=fail_on, extend_select=list(extend_select),
        extend_ignore=list(extend_ignore), allow_outside_reads=allow_outside_reads,
        cache_dir=str(cache_dir) if cache_dir is not None else None,
    )
    try:
        settings = resolve_settings(request)
    except ConfigError as error:
        raise UsageError(str(error)) from None
    return settings if respect_gitignore else replace(settings, respect_gitignore=False)


def _paths(paths: Sequence[PathLike]) -> List[Path]:
    return [Path(path) for path in paths] or [Path(".")]


def target_of(settings: Settings, global_batch: Optional[int] = None) -> Target:
    """The GPU and world size the settings ask to check against (and the global batch a port keeps)."""
    from trainlint.linter import TargetError, make_target

    if settings.num_gpus is not None and settings.num_gpus < 1:
        raise UsageError("--num-gpus must be at least 1")
    if global_batch is not None and global_batch < 1:
        raise UsageError("--global-batch must be at least 1")
    try:
        target = make_target(settings.gpu, settings.gpu_memory, settings.num_gpus)
    except TargetError as error:
        raise UsageError(str(error)) from None
    return replace(target, global_batch=global_batch)


def _selection(settings: Settings) -> Selection:
    from trainlint.linter import Selection

    return Selection(tuple(settings.select), tuple(settings.ignore), tuple(settings.per_file_ignores))


@dataclass(frozen=True)
class ScanOptions:
    """How files are read: `cache` keeps reader facts between runs (in the settings' `cache_dir`, else
    `.trainlint_cache` beside the configuration file or in the working directory); `processes` reads a
    cold scan's files in that many processes (None: every core); `progress(done, total)` hears of it."""

    cache: bool = False
    processes: Optional[int] = None
    progress: Optional[Callable[[int, int], None]] = None


# Where the cache goes when neither `--cache-dir` nor the configuration's `cache-dir` says (as ruff's
# RUFF_CACHE_DIR): a CI job or a test run keeps it out of the checked tree.
CACHE_DIR_VARIABLE = "TRAINLINT_CACHE_DIR"


def cache_dir_of(settings: Settings) -> Path:
    if settings.cache_dir:
        return Path(settings.cache_dir)
    from_environment = os.environ.get(CACHE_DIR_VARIABLE, "").strip()
    return Path(from_environment) if from_environment else default_cache_dir(settings.config_path)


def _exclusions(paths: Sequence[Path], settings: Settings) -> Tuple[str, ...]:
    """The configured exclude patterns, plus what .gitignore ignores below the folders named."""
    from trainlint.gitignore import ignored_paths
    from trainlint.resolution import SHELL_SUFFIXES, YAML_SUFFIXES

    if not settings.respect_gitignore:
        return tuple(settings.exclude)
    folders = [path for path in paths if path.is_dir()]
    return (*settings.exclude, *ignored_paths(folders, sorted(SHELL_SUFFIXES | YAML_SUFFIXES)))


def _lint_paths(paths: Sequence[Path], settings: Settings, preserve: bool = False,
                global_batch: Optional[int] = None, options: ScanOptions = ScanOptions()) -> LintResult:
    from trainlint.linter import lint as _lint
    from trainlint.resolution.workspace import Workspace

    return _lint(list(paths), target_of(settings, global_batch), _selection(settings), _exclusions(paths, settings),
                 preserve_effective_batch=preserve,
                 workspace=Workspace(allow_outside_reads=settings.allow_outside_reads),
                 cache_dir=cache_dir_of(settings) if options.cache else None,
                 processes=options.processes, progress=options.progress)


# --- changed-files mode --------------------------------------------------------------------------

def _changed_files(paths: Sequence[PathLike], diff_base: Optional[str],
                   changed: bool) -> Optional[Tuple[List[Path], ChangedLines]]:
    """The changed files of `diff_base` (a git ref) or of `changed` (the paths are the changed
    files) with their changed lines where git knows them, or None outside changed-files mode."""
    from trainlint.changed import ChangedFilesError, git_changed_files, git_changed_lines, whole_files

    if changed:
        if diff_base:
            raise UsageError("--changed and --diff-base are exclusive")
        files = [Path(path).resolve() for path in paths]
        return files, whole_files(files)
    if not diff_base:
        return None
    try:
        return git_changed_files(diff_base), git_changed_lines(diff_base)
    except ChangedFilesError as error:
        raise UsageError(str(error)) from None


def _scoped_lint(paths: Sequence[PathLike], settings: Settings, preserve: bool, diff_base: Optional[str],
                 changed: bool, global_batch: Optional[int] = None,
                 options: ScanOptions = ScanOptions()) -> LintResult:
    """The whole tree, or in changed-files mode the repository scan narrowed to the jobs that read
    a changed file, each finding placed on a changed line where one caused it."""
    from trainlint.changed import (
        anchor_on_changes,
        real,
        repository_of,
        restrict,
        restricted_files,
        scan_paths,
        without_phantom_entries,
    )
    from trainlint.linter import LintResult
    from trainlint.resolution import Scan

    found = _changed_files(paths, diff_base, changed)
    if found is None:
        return _lint_paths(_paths(paths), settings, preserve, global_batch, options)
    changed_files, changed_lines = found
    if changed:
        roots = list(dict.fromkeys(repository_of(path) for path in changed_files))
    else:
        roots = _paths(paths)
    if not roots:
        return LintResult(scan=Scan())
    named = scan_paths(roots, changed_files, _exclusions(roots, settings))
    result = _lint_paths(named, settings, preserve, global_batch, options)
    result.scan = without_phantom_entries(result.scan, named[len(roots):])
    findings, narrowed = restrict(result.scan, result.findings, changed_files)
    findings = anchor_on_changes(findings, narrowed.runs, changed_lines)
    kept = {run.id for run in narrowed.runs}
    touched = restricted_files(narrowed, changed_files)
    return LintResult(
        scan=narrowed,
        findings=findings,
        estimates={run_id: value for run_id, value in result.estimates.items() if run_id in kept},
        suppressed=result.suppressed,
        errors=result.errors,
        effective_batches={run_id: value for run_id, value in result.effective_batches.items() if run_id in kept},
        target=result.target,
        unread=[note for note in result.unread if real(note.path) in touched],
    )


# --- check ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CheckResult:
    """What `trainlint check` reports. `findings` passed the suppressions, the selection and the
    baseline, and carry the edits their fix would make."""

    findings: Tuple[Finding, ...]
    runs: Tuple[TrainingRun, ...]
    estimates: Mapping[str, MemoryEstimate]
    effective_batches: Mapping[str, Value]
    settings: Settings
    # Findings an inline `# trainlint: ignore` silenced, and findings the baseline accepts.
    suppressed: Tuple[Finding, ...] = ()
    baselined: Tuple[Finding, ...] = ()
    # What the readers could not read statically: notes that belong to no rule.
    diagnostics: Tuple[Diagnostic, ...] = ()
    # A rule or an estimate failed on one job; the other jobs were checked.
    errors: Tuple[str, ...] = ()
    # Each file the scan read, as it was when read (see Workspace.stamps).
    stamps: Mapping[Path, Tuple[int, ...]] = field(default_factory=dict)

    @property
    def report(self) -> Report:
        from trainlint.core import Report

        return Report(self.findings, self.runs, dict(self.estimates), run_batches=dict(self.effective_batches),
                      unread=self.diagnostics)

    @property
    def failing(self) -> bool:
        """A finding at or above the settings' `fail_on` severity."""
        return fails((finding.severity for finding in self.findings), self.settings.fail_on)

    @property
    def exit_code(self) -> ExitCode:
        if self.errors:
            return ExitCode.ERROR
        return ExitCode.FINDINGS if self.failing else ExitCode.CLEAN


def lint(paths: Sequence[PathLike] = (), settings: Optional[Settings] = None, *,
         preserve_effective_batch: bool = False, diff_base: Optional[str] = None, changed: bool = False,
         baseline: Optional[PathLike] = None, options: ScanOptions = ScanOptions()) -> CheckResult:
    """Check the jobs under `paths` (default: the working directory).

    `preserve_effective_batch`: batch fixes keep per-device × accumulation × world size.
    `diff_base`: report every job that reads a file changed since the merge base with this git ref.
    `changed`: `paths` are changed files; their repositories are scanned for the jobs that read one.
    `baseline`: a baseline file (see `write_baseline`); the findings it accepts are left out.
    `options`: the fact cache, the reading processes and a progress callback (see ScanOptions)."""
    from trainlint.fixers.journal import recover_paths
    from trainlint.readers.source import resolving_once

    recover_paths(paths)
    settings = settings if settings is not None else load_settings(paths)
    # One block for the scan and the planning of its fixes: the planner asks again for the paths and the estimates
    # the scan worked out (a check writes nothing in between).
    with resolving_once():
        result = _scoped_lint(paths, settings, preserve_effective_batch, diff_base, changed, options=options)
        baselined: List[Finding] = []
        if baseline is not None:
            from trainlint.baseline import BaselineError, load_baseline  # only with a baseline: it reads sources

            try:
                accepted = load_baseline(Path(baseline))
            except BaselineError as error:
                raise UsageError(str(error)) from None
            result.findings, baselined = accepted.split(result.findings)
        planned = tuple(_with_planned_edits(result))
    return CheckResult(
        findings=planned,
        runs=tuple(result.scan.runs),
        estimates=dict(result.estimates),
        effective_batches=dict(result.effective_batches),
        settings=settings,
        suppressed=tuple(result.suppressed),
        baselined=tuple(baselined),
        diagnostics=tuple(result.unread),
        errors=tuple(result.errors),
        stamps=dict(result.scan.stamps),
    )


def _with_planned_edits(result: LintResult) -> List[Finding]:
    """The findings with their fixes' edits planned. The planner, its editors and the port plans (~30 ms to
    import) are imported only when a finding carries a fix."""
    if all(finding.fix is None for finding in result.findings):
        return list(result.findings)
    from trainlint.fixers.engine import with_planned_edits

    return with_planned_edits(result)


def write_baseline(path: PathLike, findings: Iterable[Finding]) -> int:
    """Write `findings` as a baseline to `path` (atomically); returns how many were written."""
    from trainlint.baseline import write_baseline as _write_baseline_file

    return _write_baseline_file(Path(path), findings)


# --- fix -----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class FixResult:
    """What `trainlint fix` did (or, with `preview`, would do: every round, computed in memory)."""

    outcome: FixOutcome
    settings: Settings
    unsafe: bool
    preview: bool

    @property
    def diff(self) -> str:
        """The unified diff of a preview; empty after a real run."""
        return self.outcome.diff

    @property
    def error(self) -> Optional[str]:
        """Why the files were left as they were, if they were."""
        return self.outcome.error

    @property
    def remaining(self) -> Tuple[Finding, ...]:
        """The findings of the last lint: after the fixes, or before them for a preview."""
        return tuple(self.outcome.result.findings) if self.outcome.result is not None else ()

    @property
    def exit_code(self) -> ExitCode:
        if self.error:
            return ExitCode.ERROR
        failing = fails((finding.severity for finding in self.remaining), self.settings.fail_on)
        return ExitCode.FINDINGS if failing or (self.preview and self.diff) else ExitCode.CLEAN


def fix(paths: Sequence[PathLike] = (), settings: Optional[Settings] = None, *, unsafe: bool = False,
        preserve_effective_batch: bool = False, preview: bool = False, diff_base: Optional[str] = None,
        changed: bool = False, global_batch: Optional[int] = None) -> FixResult:
    """Apply the fixes of the findings under `paths` until none is left (at most a few rounds, every
    file written atomically, the jobs read again after each round). `unsafe` also applies fixes that
    may change training results; `preview` writes nothing and computes every round in memory. A job
    that does not fit the target (or whose launcher states another GPU count than `num_gpus`) gets its
    port plan; `global_batch` is the global batch to keep when the launcher states no GPU count."""
    from trainlint.fixers.engine import FixSession
    from trainlint.fixers.journal import recover_paths

    recover_paths(paths)
    settings = settings if settings is not None else load_settings(paths)
    session = FixSession(lambda: _scoped_lint(paths, settings, preserve_effective_batch, diff_base, changed,
                                              global_batch),
                         unsafe, preserve_effective_batch)
    outcome = session.preview() if preview else session.run()
    return FixResult(outcome, settings, unsafe, preview)


# --- estimate ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class EstimateResult:
    """The resolved jobs and their per-GPU memory estimates on `gpu` (`gpu_assumed`: none was named)."""

    runs: Tuple[TrainingRun, ...]
    estimates: Mapping[str, MemoryEstimate]
    effective_batches: Mapping[str, Value]
    gpu: Gpu
    gpu_assumed: bool
    # Run id -> what would make a job that does not fit fit (when asked for).
    suggestions: Mapping[str, Tuple[Suggestion, ...]] = field(default_factory=dict)
    # Run id -> the port plan onto the target (the machine's GPU count, the GPU): chosen plan and runners-up.
    plans: Mapping[str, PortPlan] = field(default_factory=dict)
    num_gpus: Optional[int] = None
    diagnostics: Tuple[Diagnostic, ...] = ()
    errors: Tuple[str, ...] = ()

    @property
    def report(self) -> Report:
        from trainlint.core import Report

        return Report((), self.runs, dict(self.estimates), run_batches=dict(self.effective_batches))


def estimate(paths: Sequence[PathLike] = (), settings: Optional[Settings] = None, *,
             with_suggestions: bool = False, global_batch: Optional[int] = None) -> EstimateResult:
    """Resolve the jobs under `paths` and estimate their per-GPU memory, with each job's port plan onto
    the target (what `fix` would apply). `with_suggestions` also works out, for each job that does not
    fit, the single changes that would make it fit."""
    from trainlint.fixers.journal import recover_paths
    from trainlint.memory import suggestions
    from trainlint.memory.plans import plan_port

    recover_paths(paths)
    settings = settings if settings is not None else load_settings(paths)
    target = target_of(settings, global_batch)
    result = _lint_paths(_paths(paths), settings, global_batch=global_batch)
    plans = {}
    for run in result.scan.runs:
        port = plan_port(run, target.gpu, target.num_gpus, unsafe=True, global_batch=global_batch)
        if port is not None:
            plans[run.id] = port
    proposals = {}
    if with_suggestions:
        proposals = {run.id: tuple(suggestions(run, target.gpu)) for run in result.scan.runs
                     if run.id in result.estimates and not result.estimates[run.id].fits}
    return EstimateResult(
        runs=tuple(result.scan.runs),
        estimates=dict(result.estimates),
        effective_batches=dict(result.effective_batches),
        gpu=target.gpu,
        gpu_assumed=target.gpu_assumed,
        suggestions=proposals,
        plans=plans,
        num_gpus=target.num_gpus,
        diagnostics=tuple(result.unread),
        errors=tuple(result.errors),
    )
