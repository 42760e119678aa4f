"""Recipes whose launch command lives in a README: a file of arguments that no launcher of the scan runs, shown
started by a command in a Markdown document of its folder or a folder above it (alignment-handbook's
`accelerate launch --config_file recipes/accelerate_configs/deepspeed_zero3.yaml scripts/run_sft.py
recipes/zephyr-7b-beta/sft/config_full.yaml`). That command is the recipe's job: it names the accelerate config
(the sharding and the process count) and the entry script, which the file by itself leaves unknown.

A document is not a script the repository runs: a command is taken only when everything it names is in the tree
and it reads the recipe, and the problems of the document's text are not reported."""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Dict, Iterator, List, Optional, Sequence

from trainlint.core import DiagnosticKind, TrainingRun
from trainlint.readers.facts import Launch
from trainlint.readers.markdown import DOCUMENT_SUFFIX
from trainlint.readers.source import display_path, safe_resolve
from trainlint.resolution.workspace import Workspace

BuildRun = Callable[[Launch, Path, Workspace], Optional[TrainingRun]]


def documented_runs(recipes: Sequence[Path], workspace: Workspace, build_run: BuildRun) -> Dict[Path, TrainingRun]:
    """For each of `recipes` (files of arguments no launcher runs) that a document's command starts, the job of
    the first such command, from the nearest folder up; recipes no command starts are left out."""
    found: Dict[Path, TrainingRun] = {}
    for recipe in recipes:
        for document in _documents_above(recipe, workspace):
            run = _documented_run(recipe, document, workspace, build_run)
            if run is not None:
                found[recipe] = run
                break
    return found


def is_document(path: Path) -> bool:
    return path.suffix.lower() == DOCUMENT_SUFFIX


def document_runs(document: Path, workspace: Workspace, build_run: BuildRun) -> List[TrainingRun]:
    """The jobs of the training commands a document named by itself shows (`trainlint check docs/train.md`): each
    command that is one and names only files the tree holds."""
    runs = (build_run(launch, document, workspace) for launch in workspace.documented(document).launches)
    return [run for run in runs if run is not None and not _names_missing_file(run)]


def _documents_above(recipe: Path, workspace: Workspace) -> Iterator[Path]:
    """The Markdown documents of the recipe's folder and of each folder above it, up to its repository's root (or
    the scanned tree's top), nearest first."""
    folder = safe_resolve(recipe).parent
    root = workspace.repo_root(folder)
    while workspace.inside(folder):
        try:
            documents = sorted(path for path in folder.iterdir()
                               if path.suffix.lower() == DOCUMENT_SUFFIX and path.is_file())
        except OSError:
            documents = []
        yield from documents
        if folder == root or folder.parent == folder:
            return
        folder = folder.parent


def _documented_run(recipe: Path, document: Path, workspace: Workspace, build_run: BuildRun) -> Optional[TrainingRun]:
    target = safe_resolve(recipe)
    for launch in workspace.documented(document).launches:
        if not _names(launch, target, document, workspace):
            continue
        run = build_run(launch, document, workspace)
        if run is None or display_path(recipe) not in run.configs or _names_missing_file(run):
            continue
        return run
    return None


def _names_missing_file(run: TrainingRun) -> bool:
    """The command names a file the tree lacks: the document shows another checkout's layout, or an older one, and
    the command is not this tree's job."""
    return any(diagnostic.kind == DiagnosticKind.MISSING_FILE for diagnostic in run.diagnostics)


def _names(launch: Launch, target: Path, document: Path, workspace: Workspace) -> bool:
    """Whether a word of the launch (`recipe.yaml`, `--config recipe.yaml`, `--config=recipe.yaml`) names the
    recipe at `target`."""
    written: List[str] = []
    for word in (*launch.launcher_args, *launch.script_args):
        if isinstance(word.value, str):
            written.append(word.value.split("=", 1)[-1])
    candidates = [value for value in written if Path(value).name == target.name]
    if not candidates:
        return False
    dirs = workspace.search_dirs(document, launch.cwd)
    return any(safe_resolve(found) == target for found in (workspace.find(value, dirs) for value in candidates)
               if found is not None)
