"""Reading ahead what a scan will read, in parallel waves: the launchers and recipes found, then the
entry scripts their launches run, then (breadth first, as `entry.collect` follows them) the local
modules those import. The scan then finds every file already read; what a wave misses is read later,
one by one, as before. Only files a job reaches are read."""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Set

from trainlint.core import FileKind, file_kind
from trainlint.readers.pool import Job, ReadingPool
from trainlint.readers.source import safe_resolve
from trainlint.resolution import RECIPE_KEYS, discover, named_files
from trainlint.resolution.entry import MAX_DEPTH, local_imports
from trainlint.resolution.workspace import Workspace

# Told (files read ahead so far, files known to read so far) after each wave.
Progress = Callable[[int, int], None]


def prefetch(paths: Sequence[Path], exclude: Sequence[str], workspace: Workspace, processes: int,
             progress: Optional[Progress] = None) -> None:
    with ReadingPool(processes, workspace.cache) as pool:
        _prefetch(paths, exclude, workspace, pool, progress)


def _prefetch(paths: Sequence[Path], exclude: Sequence[str], workspace: Workspace, pool: ReadingPool,
              progress: Optional[Progress]) -> None:
    counts = [0, 0]

    # A YAML file found in a folder is read only if it may be a recipe (as `scan` decides); a named one always.
    named = named_files(paths)

    def load(jobs: List[Job]) -> None:
        counts[1] += len(jobs)
        _load(workspace, jobs, pool, named)
        counts[0] += len(jobs)
        if progress is not None:
            progress(counts[0], counts[1])

    files, _ = discover(paths, exclude)
    first: List[Job] = [(_kind(path), path) for path in files if _kind(path)]
    load(first)
    entries: List[Job] = []
    roots: Dict[Path, Sequence[Path]] = {}
    for kind, path in first:
        if kind != "shell":
            continue
        for launch in workspace.shell(path).launches:
            dirs = workspace.search_dirs(path, launch.cwd)
            found = _entry(workspace, path, launch, dirs)
            if found is not None:
                entries.append(("python", found))
                roots.setdefault(safe_resolve(found), dirs)
    _read_imports(workspace, entries, roots, load)


def _kind(path: Path) -> Optional[str]:
    """The reader a named file goes to (the cache's and the workers' key), by the one suffix table."""
    kind = file_kind(path) if path.suffix else None
    return kind.value if kind in (FileKind.SHELL, FileKind.YAML, FileKind.PYTHON, FileKind.JSON) else None


def _entry(workspace: Workspace, script: Path, launch, dirs: Sequence[Path]) -> Optional[Path]:
    entry = launch.entry
    if entry is None or not isinstance(entry.value, str):
        return None
    found = workspace.module(entry.value, script, dirs) if launch.entry_is_module else workspace.find(entry.value, dirs)
    return found if found is not None and found.suffix == ".py" else None


def _read_imports(workspace: Workspace, entries: List[Job], roots: Dict[Path, Sequence[Path]],
                  load: Callable[[List[Job]], None]) -> None:
    seen: Set[Path] = set()
    frontier = _unique(entries, seen)
    for _depth in range(MAX_DEPTH + 1):
        if not frontier:
            return
        load(frontier)
        following: List[Job] = []
        for _, path in frontier:
            dirs = roots.get(safe_resolve(path), ())
            for target in local_imports(workspace.python(path), path, workspace, dirs):
                if "site-packages" not in target.parts:
                    following.append(("python", target))
                    roots.setdefault(safe_resolve(target), dirs)
        frontier = _unique(following, seen)


def _unique(jobs: List[Job], seen: Set[Path]) -> List[Job]:
    out = []
    for kind, path in jobs:
        key = safe_resolve(path)
        if key not in seen:
            seen.add(key)
            out.append((kind, path))
    return out


def _load(workspace: Workspace, jobs: List[Job], pool: ReadingPool, named: Set[Path]) -> None:
    # Only what the workspace itself would read goes to the cache or a worker: a FIFO, a device or a
    # file outside the tree is left to the workspace, which refuses it and says why.
    todo = [(kind, path) for kind, path in jobs if not workspace.has(kind, path) and workspace.may_read(path)]
    todo = [(kind, path) for kind, path in todo if kind != "yaml" or safe_resolve(path) in named
            or workspace.yaml_may_matter(path, RECIPE_KEYS)]
    if workspace.cache is not None:
        todo = [(kind, path) for kind, path in todo if not workspace.load_cached(kind, path)]
    for (kind, path), facts in zip(todo, pool.read(todo)):
        workspace.preload(kind, path, facts)
