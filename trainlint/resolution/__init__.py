"""Turning the paths a user names into training runs, joined in one settings graph.

`runs` assembles a job from its launch (or recipe, or entry script alone) and the files it reads
(`entry`, `entry_settings`, `inputs`, `world`); `precedence` decides which written value wins;
`frameworks` holds each framework's defaults and derived knobs; `trainlint.graph` joins the jobs.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from trainlint.core import (
    DISCOVERED_SUFFIXES,
    Diagnostic,
    DiagnosticKind,
    FileKind,
    TrainingRun,
    file_kind,
    suffixes_of,
)
from trainlint.inputs import SKIP_DIRS
from trainlint.readers.facts import Flow
from trainlint.readers.source import display_path, resolving_once, safe_resolve
from trainlint.resolution.workspace import Workspace

if TYPE_CHECKING:
    from trainlint.graph import SettingsGraph

# Views of the one suffix table (trainlint.core.file_kind), for callers that list suffixes.
SHELL_SUFFIXES = suffixes_of(FileKind.SHELL)
YAML_SUFFIXES = suffixes_of(FileKind.YAML)
RECIPE_KEYS = ("per_device_train_batch_size", "micro_batch_size", "gradient_accumulation_steps")


@dataclass
class Scan:
    runs: List[TrainingRun] = field(default_factory=list)
    # Problems with files that belong to no run (an unreadable launcher, a path that does not exist).
    diagnostics: List[Diagnostic] = field(default_factory=list)
    scanned: List[str] = field(default_factory=list)
    # Resolved path -> the stamp of the file when the scan read it (see Workspace.stamps).
    stamps: Dict[Path, Tuple[int, ...]] = field(default_factory=dict)
    # The jobs and shell flows the settings graph joins, as the scan resolved them.
    graph_inputs: Tuple[Tuple[TrainingRun, ...], Tuple[Flow, ...]] = ((), ())
    _graph: Optional["SettingsGraph"] = field(default=None, repr=False, compare=False)

    @property
    def graph(self) -> "SettingsGraph":
        """The settings graph, joined on first use: most scans never ask it a question, and one that asks
        none pays neither for building it nor for importing networkx (~100 ms)."""
        if self._graph is None:
            from trainlint.graph import SettingsGraph


            runs, flows = self.graph_inputs
            self._graph = SettingsGraph.from_runs(runs, flows)
        return self._graph


def discover(paths: Sequence[Path], exclude: Sequence[str] = ()) -> Tuple[List[Path], List[Diagnostic]]:
    """Files to read: named files as they are (a Markdown document too); shell scripts and YAML recipes below named
    folders."""
    found: List[Path] = []
    problems: List[Diagnostic] = []
    for path in paths:
        if not os.path.lexists(path):
            problems.append(Diagnostic(DiagnosticKind.MISSING_FILE, f"{path} does not exist", str(path)))
        elif _is_dir(path):
            # Links to folders are not followed (followlinks=False): a loop cannot trap the walk.
            for folder, dirnames, filenames in os.walk(path):
                dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
                for name in sorted(filenames):
                    candidate = Path(folder) / name
                    if candidate.suffix.lower() in DISCOVERED_SUFFIXES and not _excluded(candidate, exclude):
                        found.append(candidate)
        else:
            found.append(path)
    # A file named on its own and through its folder (`trainlint check . train.sh`) is one file: read once.
    unique: Dict[Path, Path] = {}
    for path in found:
        unique.setdefault(safe_resolve(path), path)
    return list(unique.values()), problems


def named_files(paths: Sequence[Path]) -> Set[Path]:
    """The files (not folders) among `paths`, resolved: each is read in full, whatever it holds."""
    return {safe_resolve(p) for p in paths if not _is_dir(p)}


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:  # a link loop: read as a file, and reported as one
        return False


def _excluded(path: Path, patterns: Sequence[str]) -> bool:
    shown = display_path(path)
    return any(Path(shown).match(p) or shown.startswith(p.rstrip("/") + "/") for p in patterns)


def _is_recipe(workspace: Workspace, path: Path) -> bool:
    # Most YAML files of a tree are no recipe, and their text alone often shows it: no parse then.
    if not workspace.yaml_may_matter(path, RECIPE_KEYS):
        return False
    # Imported here: the frameworks import this package's modules, which import this package first.
    from trainlint.resolution.frameworks.deepspeed import CONFIG_ROOTS

    config = workspace.config(path)
    # A DeepSpeed config written as YAML (`gradient_accumulation_steps` beside `zero_optimization`) is the config a
    # launcher names, not a recipe of its own.
    if {key.split(".", 1)[0] for key in config.values} & set(CONFIG_ROOTS):
        return False
    return any(key in config.values for key in RECIPE_KEYS)


def scan(paths: Sequence[Path], exclude: Sequence[str] = (), workspace: Workspace = None) -> Scan:
    with resolving_once():
        return _scan(paths, exclude, workspace or Workspace())


def _scan(paths: Sequence[Path], exclude: Sequence[str], workspace: Workspace) -> Scan:
    workspace.confine_to(paths)
    result = Scan()
    files, problems = discover(paths, exclude)
    result.diagnostics.extend(problems)
    if files:
        _read_jobs(paths, files, workspace, result)
    result.stamps = dict(workspace.stamps)
    return result


def _read_jobs(paths: Sequence[Path], files: Sequence[Path], workspace: Workspace, result: Scan) -> None:
    """Read `files` and add to `result` the jobs they launch, with the problems of each file."""
    # Imported here: job assembly and the frameworks behind it (~25 ms) only once there are files to read.
    from trainlint.resolution.documented import document_runs, documented_runs, is_document
    from trainlint.resolution.runs import build_run, python_run, recipe_run
    from trainlint.resolution.script_calls import called_runs

    explicit = named_files(paths)
    entries_seen = set()
    python_candidates: List[Path] = []
    recipe_candidates: List[Path] = []
    flows: List[Flow] = []
    for path in files:
        result.scanned.append(display_path(path))
        kind = file_kind(path)
        if kind == FileKind.PYTHON:
            python_candidates.append(path)
        elif kind == FileKind.YAML:
            if safe_resolve(path) in explicit or _is_recipe(workspace, path):
                recipe_candidates.append(path)
            elif workspace.yaml_may_matter(path, RECIPE_KEYS):
                # Not a recipe as far as it was read: say so when it was not read to the end.
                result.diagnostics.extend(_unread_parts(workspace.config(path).diagnostics))
        elif kind == FileKind.JSON:
            config = workspace.config(path)
            result.diagnostics.extend(config.diagnostics)
        elif kind is None and safe_resolve(path) in explicit and is_document(path):
            # A Markdown document named by itself: the training commands its shell code blocks show are its jobs.
            for run in document_runs(path, workspace, build_run):
                result.runs.append(run)
                entries_seen.update(run.facts.python_files[:1])
        elif kind == FileKind.SHELL:
            # A named TOML file (configuration, version pins) or one no reader takes (a notebook, a README) holds
            # no job, and is not bash: it is not read as a launcher.
            script = workspace.shell(path)
            flows.extend(script.flows)
            attached = set()
            for launch in script.launches:
                run = build_run(launch, path, workspace)
                if run is None:
                    continue
                own = _diagnostics_within(script.diagnostics, launch)
                attached.update(id(d) for d in own)
                run = _with_diagnostics(run, own)
                result.runs.append(run)
                entries_seen.update(run.facts.python_files[:1])
            result.diagnostics.extend(d for d in script.diagnostics if id(d) not in attached)
            for call in script.calls:
                for run in called_runs(call, path, workspace, build_run):
                    result.runs.append(run)
                    entries_seen.update(run.facts.python_files[:1])
    # A recipe a launcher in the scan already runs is that launcher's job (with its world size and
    # its accelerate config), not a second one of its own, unless it was named by itself.
    launched = {config for run in result.runs for config in run.configs}
    # A recipe no launcher runs may be started by a command its README shows: that command is its job.
    documented = documented_runs([path for path in recipe_candidates if safe_resolve(path) not in explicit
                                  and display_path(path) not in launched], workspace, build_run)
    run_ids = {run.id for run in result.runs}
    for path in recipe_candidates:
        if safe_resolve(path) not in explicit and display_path(path) in launched:
            continue
        if path in documented:
            # One command may name two of the recipes (a recipe and a second file of arguments): one job.
            if documented[path].id not in run_ids:
                run_ids.add(documented[path].id)
                result.runs.append(documented[path])
            continue
        config = workspace.config(path)
        if config.diagnostics and not config.values:
            result.diagnostics.extend(config.diagnostics)
        elif any(key in config.values for key in RECIPE_KEYS):
            result.runs.append(recipe_run(path, workspace))
            result.diagnostics.extend(_unread_parts(config.diagnostics))
        else:
            result.diagnostics.extend(_unread_parts(config.diagnostics))
    for path in python_candidates:
        if display_path(path) in entries_seen:
            continue
        module = workspace.python(path)
        result.diagnostics.extend(module.diagnostics)
        run = python_run(path, workspace)
        if run is not None:
            result.runs.append(run)
    result.graph_inputs = (tuple(result.runs), tuple(flows))


def _unread_parts(diagnostics: Iterable[Diagnostic]) -> List[Diagnostic]:
    """The diagnostics that say part of a file was left unread (nesting, value caps)."""
    return [d for d in diagnostics if d.kind == DiagnosticKind.UNREADABLE_FILE]


def _diagnostics_within(diagnostics: Iterable[Diagnostic], launch) -> List[Diagnostic]:
    """Diagnostics inside a launch command, or on the line right after it (a broken continuation
    ends the command early, so its orphaned flags follow it)."""
    first, last = launch.origin.line, launch.origin.end_line
    return [d for d in diagnostics if d.origin is not None and d.origin.path == launch.origin.path
            and first <= d.origin.line <= last + 1]


def _with_diagnostics(run: TrainingRun, extra: List[Diagnostic]) -> TrainingRun:
    from dataclasses import replace

    return replace(run, diagnostics=tuple(extra) + run.diagnostics) if extra else run
