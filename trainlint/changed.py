"""Changed-files mode: report the jobs a change can affect, not just the changed lines.

A job depends on every file in its closure in the settings graph (launcher, entry script and the
modules it imports, DeepSpeed and YAML configs). A change to any of them re-checks the job: a PR
that edits only `zero3.json` reports every launcher that passes `--deepspeed zero3.json`.

The changed files come from git (`--diff-base REF`: the merge base of REF and HEAD against the
working tree, plus untracked files) or from the command line (`--changed`: pre-commit passes the
staged files as paths). Either way the scan covers the whole repository, because the launcher that
reads a changed config is usually not among the changed files; the findings are then restricted to
the jobs that touch a changed file (and to problems located in a changed file)."""
from __future__ import annotations

import os
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Iterable, List, Optional, Sequence, Set, Tuple, Union

from trainlint.core import Finding, TrainingRun
from trainlint.resolution import SHELL_SUFFIXES, YAML_SUFFIXES, Scan, discover

# Files a changed-files scan names explicitly when the folder walk would not pick them up.
EXPLICIT_SUFFIXES = SHELL_SUFFIXES | YAML_SUFFIXES | {".py", ".json"}
CONFIG_NAMES = {"pyproject.toml", "trainlint.toml", ".trainlint.toml"}


class ChangedFilesError(Exception):
    """The changed files cannot be determined (exit code 2)."""


def real(path: Union[str, Path]) -> str:
    """One spelling per file: absolute, symbolic links resolved, case folded where the OS folds it."""
    return os.path.normcase(os.path.realpath(os.path.abspath(str(path))))


# --- which files changed ------------------------------------------------------------------------

def _git(args: Sequence[str], cwd: Path) -> str:
    try:
        completed = subprocess.run(["git", *args], cwd=str(cwd), capture_output=True, text=True, check=False)
    except OSError as error:
        raise ChangedFilesError(f"cannot run git: {error}") from None
    if completed.returncode != 0:
        raise ChangedFilesError(f"git {' '.join(args)} failed: {completed.stderr.strip() or completed.returncode}")
    return completed.stdout


def git_changed_files(base: str, cwd: Optional[Path] = None) -> List[Path]:
    """Absolute paths changed between the merge base of `base` and HEAD and the working tree,
    plus untracked files (so a local run sees new files too). Deleted files are included: they may
    still be referenced."""
    folder = Path(cwd or Path.cwd())
    top = Path(_git(["rev-parse", "--show-toplevel"], folder).strip())
    try:
        merge_base = _git(["merge-base", base, "HEAD"], folder).strip()
    except ChangedFilesError as error:
        raise ChangedFilesError(f"{error}\n(in CI, fetch the base branch and its history, e.g. "
                                f"actions/checkout with fetch-depth: 0)") from None
    names = _git(["diff", "--name-only", "-z", "--no-renames", merge_base, "--"], folder).split("\0")
    names += _git(["ls-files", "--others", "--exclude-standard", "-z"], top).split("\0")
    return sorted({top / name for name in names if name})


def repository_of(path: Path) -> Path:
    """The folder to scan for a changed file: its git checkout, else the nearest project root
    (pyproject.toml, setup.py), else its own folder."""
    start = path.resolve().parent
    for folder in [start, *start.parents]:
        if (folder / ".git").exists():
            return folder
    from trainlint.resolution.workspace import repo_root

    return repo_root(start) or start


# --- what to scan -------------------------------------------------------------------------------

def scan_paths(roots: Sequence[Path], changed: Iterable[Path], exclude: Sequence[str] = ()) -> List[Path]:
    """The roots plus the changed files a folder walk would skip (entry scripts, JSON configs),
    so that a changed `train.py` run by itself or a broken `zero3.json` is still read. Files the
    walk finds are not named twice."""
    walked, _ = discover(list(roots), exclude)
    seen = {real(path) for path in walked}
    root_keys = [real(root) for root in roots]
    extra: List[Path] = []
    for path in changed:
        key = real(path)
        inside = any(key == root or key.startswith(root.rstrip(os.sep) + os.sep) for root in root_keys)
        if inside and key not in seen and path.is_file() and path.suffix.lower() in EXPLICIT_SUFFIXES:
            seen.add(key)
            extra.append(_shown(path))
    return [*roots, *extra]


def _shown(path: Path) -> Path:
    try:
        return path.resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        return path


# --- restricting the results --------------------------------------------------------------------

def impacted_runs(found: Scan, changed: Iterable[Path]) -> Set[str]:
    """Ids of the runs whose dependency closure contains a changed file. A changed trainlint config
    affects every run."""
    keys = {real(path) for path in changed}
    if any(Path(key).name in CONFIG_NAMES for key in keys):
        return {run.id for run in found.runs}
    hits: Set[str] = set()
    for node in list(found.graph.graph.nodes):
        if isinstance(node, tuple) and len(node) == 2 and node[0] == "file" and real(node[1]) in keys:
            hits.update(found.graph.runs_touching(node[1]))
    for run in found.runs:
        if any(real(path) in keys for path in _closure(run)):
            hits.add(run.id)
    return hits


def _closure(run: TrainingRun) -> List[str]:
    """The files a run reads, beyond those the graph records (belt and braces)."""
    return [run.path, *run.files, *run.configs, *run.facts.python_files, *([run.entry] if run.entry else [])]


def keep_finding(finding: Finding, runs: Set[str], changed_keys: Set[str]) -> bool:
    """A finding of an impacted job, or one located in a changed file."""
    if finding.run_id is not None and finding.run_id in runs:
        return True
    return real(finding.path) in changed_keys


def restrict(found: Scan, findings: Sequence[Finding], changed: Iterable[Path]) -> Tuple[List[Finding], Scan]:
    """(findings, scan) limited to the runs a change touches and the problems in changed files."""
    changed = list(changed)
    runs = impacted_runs(found, changed)
    keys = {real(path) for path in changed}
    kept = [finding for finding in findings if keep_finding(finding, runs, keys)]
    narrowed = replace(found, runs=[run for run in found.runs if run.id in runs],
                       diagnostics=[d for d in found.diagnostics if real(d.path) in keys])
    return kept, narrowed


def restricted_files(narrowed: Scan, changed: Iterable[Path]) -> Set[str]:
    """The files (as `real` keys) a narrowed scan is about: the changed ones and those its runs read."""
    keys = {real(path) for path in changed}
    for run in narrowed.runs:
        keys.update(real(path) for path in _closure(run))
    return keys
