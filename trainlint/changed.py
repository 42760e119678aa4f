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
import re
from dataclasses import replace
from pathlib import Path
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple, Union

from trainlint.core import FileKind, Finding, Origin, Related, Setting, SourceKind, TrainingRun, file_kind, suffixes_of
from trainlint.resolution import Scan, discover

# Files a changed-files scan names explicitly when the folder walk would not pick them up.
EXPLICIT_SUFFIXES = suffixes_of(FileKind.SHELL, FileKind.YAML, FileKind.PYTHON, FileKind.JSON)
CONFIG_NAMES = {"pyproject.toml", "trainlint.toml", ".trainlint.toml"}


class ChangedFilesError(Exception):
    """The changed files cannot be determined (exit code 2)."""


def real(path: Union[str, Path]) -> str:
    """One spelling per file: absolute, symbolic links resolved, case folded where the OS folds it."""
    return os.path.normcase(os.path.realpath(os.path.abspath(str(path))))


# --- which files changed ------------------------------------------------------------------------

def _git(args: Sequence[str], cwd: Path) -> str:
    import subprocess  # only in changed-files mode: every scan imports this module

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


# Changed file (a `real` key) -> its changed line numbers, or None when the whole file counts as
# changed (an untracked file, or a file pre-commit passes without line information).
ChangedLines = Dict[str, Optional[Set[int]]]
# Compiled (and cached by `re`) on first use: every scan imports this module, few read a diff.
_HUNK = r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@"


def git_changed_lines(base: str, cwd: Optional[Path] = None) -> ChangedLines:
    """The lines each changed file has changed since the merge base of `base` and HEAD (in the
    working tree); untracked files count as changed throughout."""
    folder = Path(cwd or Path.cwd())
    top = Path(_git(["rev-parse", "--show-toplevel"], folder).strip())
    merge_base = _git(["merge-base", base, "HEAD"], folder).strip()
    found: ChangedLines = {}
    current: Optional[str] = None
    for line in _git(["diff", "-U0", "--no-renames", "--no-color", merge_base, "--"], folder).splitlines():
        if line.startswith("+++ "):
            name = line[4:]
            current = real(top / name[2:]) if name.startswith("b/") else None
            if current is not None:
                found.setdefault(current, set())
        elif current is not None and line.startswith("@@"):
            match = re.match(_HUNK, line)
            if match:
                start, count = int(match.group(1)), int(match.group(2) or 1)
                lines = found[current]
                if lines is not None:
                    # A pure deletion (count 0) touches the line after it.
                    lines.update(range(start, start + count) if count else (start, start + 1))
    for name in _git(["ls-files", "--others", "--exclude-standard", "-z"], top).split("\0"):
        if name:
            found[real(top / name)] = None
    return found


def whole_files(paths: Iterable[Path]) -> ChangedLines:
    """Changed files whose changed lines are not known (pre-commit's file list)."""
    return {real(path): None for path in paths}


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


def without_phantom_entries(found: Scan, named: Sequence[Path]) -> Scan:
    """The scan without the jobs of entry scripts named only because they changed, when a
    launcher in the scan already runs them: a changed `train.py` re-checks the launchers that
    run it, it is not a job of its own."""
    explicit = {real(path) for path in named if file_kind(path) == FileKind.PYTHON}
    entries = {real(path) for run in found.runs for path in ([run.entry] if run.entry else [])
               if real(run.path) not in explicit}
    phantom = {run.id for run in found.runs if real(run.path) in explicit and real(run.path) in entries}
    if not phantom:
        return found
    return replace(found, runs=[run for run in found.runs if run.id not in phantom])


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


# --- anchoring findings on the change -----------------------------------------------------------

def on_changed_line(origin: Optional[Origin], changed: Mapping[str, Optional[Set[int]]]) -> bool:
    if origin is None:
        return False
    key = real(origin.path)
    if key not in changed:
        return False
    lines = changed[key]
    return lines is None or any(line in lines for line in range(origin.line, max(origin.line, origin.end_line) + 1))


def _changed_setting(run: TrainingRun, finding: Finding,
                     changed: Mapping[str, Optional[Set[int]]]) -> Optional[Tuple[str, Setting]]:
    """The run's setting (or a value it came from) written on a changed line that the finding
    depends on, e.g. `"stage": 2` in the DeepSpeed config a PR edited under a memory verdict."""
    for knob, setting in run.settings.items():
        for step in setting.chain():
            if on_changed_line(step.origin, changed) and _depends_on(finding, knob, step):
                return knob, step
    return None


def _depends_on(finding: Finding, knob: str, setting: Setting) -> bool:
    """A finding depends on a setting it names, and a memory verdict (a size in GiB) on every
    setting: each one enters the estimate."""
    return "GiB" in finding.message or any(name in finding.message for name in _names(knob, setting))


def _names(knob: str, setting: Setting) -> Set[str]:
    """The knob and the spellings a message may use for what wrote it: `bf16` for `--bf16`, `stage` and
    `zero_optimization.stage` for that key."""
    spelling = setting.written_as or ""
    return {knob, spelling.lstrip("-"), spelling.rsplit(".", 1)[-1]} - {""}


def _key_name(knob: str, setting: Setting) -> str:
    """The key as the file writes it (`zero_optimization.stage`), else the knob."""
    return setting.written_as if setting.written_as and setting.kind == SourceKind.CONFIG_FILE else knob


def anchor_on_changes(findings: Sequence[Finding], runs: Sequence[TrainingRun],
                      changed: Mapping[str, Optional[Set[int]]]) -> List[Finding]:
    """Every finding of a changed-files scan placed on a changed line: kept where it is when it
    already is; else moved to the changed key of its job that caused it (the old place becomes a
    related location); else left where it is with a note saying why no changed line carries it."""
    by_id = {run.id: run for run in runs}
    out = []
    for finding in findings:
        if on_changed_line(finding.origin, changed):
            out.append(finding)
            continue
        moved = next((related for related in finding.related if on_changed_line(related.origin, changed)), None)
        run = by_id.get(finding.run_id) if finding.run_id else None
        cause = _changed_setting(run, finding, changed) if run is not None else None
        if moved is not None:
            out.append(_moved(finding, moved.origin, moved.message))
        elif cause is not None and cause[1].origin is not None:
            knob, setting = cause
            shown = setting.text or str(setting.value)
            note = f"changed here: `{_key_name(knob, setting)}` is now `{shown}` in {setting.origin.path}"
            out.append(_moved(finding, setting.origin, note))
        else:
            out.append(replace(finding, message=finding.message + " (" + _why_unchanged(run, changed) + ")"))
    return out


def _moved(finding: Finding, origin: Origin, note: str) -> Finding:
    """`finding` placed at `origin` (a changed line); where it was becomes a related location."""
    related = tuple(r for r in finding.related if r.origin != origin)
    if finding.origin is not None:
        related = (Related(finding.origin, "the setting the finding is about (an unchanged line)"),) + related
    message = f"{finding.message} [{note}]"
    return replace(finding, origin=origin, path=origin.path, related=related, message=message)


def _why_unchanged(run: Optional[TrainingRun], changed: Mapping[str, Optional[Set[int]]]) -> str:
    if run is None:
        return "on an unchanged line of a changed file"
    files = sorted({path for path in _closure(run) if real(path) in changed})
    named = ", ".join(files) if files else "a changed file"
    return f"on an unchanged line: reported because the job reads the changed {named}, though not caused by that change"
