"""What a scan depends on outside trainlint: the tree it reads and every path it reads or probes.

A stored result (trainlint.results) is only as good as the list of what it was computed from, so the
places that touch the disk note each path here as they touch it: the workspace (every file read,
every path looked for, found or not) and the model catalog (a local checkpoint's or the Hugging
Face cache's config.json). The note goes to the `InputLog` that `recording_inputs()` opened for the
scan, or nowhere: like `reading_overlay` in trainlint.readers.source, a context variable scopes it to
one scan, so two scans never share a log.

The tree itself (which files a folder walk finds, which `.gitignore` rules apply) is summed up by
`tree_digest`, and the tree's roots by `tree_roots`: both without importing the readers.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, List, Optional, Sequence, Set, Union

# Folders the discovery walk never enters (build output, environments, caches).
SKIP_DIRS = frozenset({".git", ".hg", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache",
                       "site-packages", "build", "dist", ".eggs"})
IGNORE_FILE = ".gitignore"
PathLike = Union[str, "os.PathLike[str]"]


# --- the tree ------------------------------------------------------------------------------------

def safe_resolve(path: PathLike) -> Path:
    """`path` absolute with its links followed; the absolute path as written on a link loop or an
    unreadable folder. The one implementation: readers.source.safe_resolve remembers its answers per scan,
    and this module stays free of the reader facts so a check answered from the result cache stays light."""
    try:
        return Path(path).resolve()
    except (OSError, RuntimeError):
        return Path(os.path.abspath(path))


def repo_root(start: Path) -> Optional[Path]:
    for folder in [start, *start.parents]:
        if (folder / ".git").exists() or (folder / "pyproject.toml").exists() or (folder / "setup.py").exists():
            return folder
    return None


def within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def tree_roots(paths: Sequence[Path], invocation_dir: Path) -> List[Path]:
    """The folders a scan of `paths` may read: each path's repository (the nearest folder above it
    with `.git`, `pyproject.toml` or `setup.py`), else the invocation directory when the path is
    below it, else the named folder (or the named file's folder)."""
    roots: List[Path] = []
    for path in paths:
        absolute = safe_resolve(path)
        folder = absolute if absolute.is_dir() else absolute.parent
        root = repo_root(folder)
        if root is None:
            root = invocation_dir if within(folder, invocation_dir) else folder
        if root not in roots:
            roots.append(root)
    return roots


def tree_digest(roots: Iterable[Path], leave_out: Optional[Path] = None) -> str:
    """Every name below `roots` as the discovery walk sees it (each entry's kind, a link's target) and
    the text of every `.gitignore`: any file created, removed or renamed in the tree, or a change of
    what git ignores, changes it. Folders the walk skips are named but not entered; `leave_out` (the
    cache folder, which the scan itself writes) is not even named."""
    digest = hashlib.sha256()
    skipped = os.path.realpath(leave_out) if leave_out is not None else None
    for root in sorted({str(root) for root in roots}):
        digest.update(f"root\0{root}\0{path_state(root)}\n".encode("utf-8", "surrogateescape"))
        for folder, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith(".")
                                 and os.path.join(folder, d) != skipped)
            digest.update(folder_state(folder, leave_out=skipped).encode("utf-8", "surrogateescape"))
            if IGNORE_FILE in filenames:
                digest.update(path_state(os.path.join(folder, IGNORE_FILE)).encode())
    return digest.hexdigest()


# --- the state of one path -----------------------------------------------------------------------

def path_state(path: PathLike) -> str:
    """What a scan could learn of `path`: missing, a folder, a file's bytes (as a hash), another kind
    of file; through a symbolic link, the link's target too."""
    name = os.fspath(path)
    try:
        info = os.lstat(name)
    except OSError:
        return "missing"
    if stat.S_ISLNK(info.st_mode):
        try:
            target = os.readlink(name)
        except OSError:
            target = "?"
        try:
            followed = _kind_of(name, os.stat(name))
        except OSError:
            followed = "dangling"
        return f"link:{target}:{followed}"
    return _kind_of(name, info)


def _kind_of(name: str, info: os.stat_result) -> str:
    if stat.S_ISDIR(info.st_mode):
        return "dir"
    if not stat.S_ISREG(info.st_mode):
        return f"special:{stat.S_IFMT(info.st_mode)}"
    digest = hashlib.sha256()
    try:
        with open(name, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError as error:
        return f"unreadable:{error.errno}"
    return f"file:{info.st_size}:{digest.hexdigest()}"


def folder_state(folder: PathLike, leave_out: Optional[str] = None) -> str:
    """The names in `folder` with the kind of each (and a link's target): what a probe for a file
    there, found or not, depends on."""
    name = os.fspath(folder)
    try:
        entries = sorted(os.scandir(name), key=lambda entry: entry.name)
    except OSError:
        return f"{name}\0{path_state(name)}\n"
    parts = [name]
    for entry in entries:
        if leave_out is not None and entry.path == leave_out:
            continue
        try:
            if entry.is_symlink():
                parts.append(f"{entry.name}\0l\0{os.readlink(entry.path)}")
            else:
                parts.append(f"{entry.name}\0{'d' if entry.is_dir() else 'f' if entry.is_file() else 'o'}")
        except OSError:
            parts.append(f"{entry.name}\0?")
    return "\0\0".join(parts) + "\n"


# --- the log of one scan -------------------------------------------------------------------------

@dataclass
class InputLog:
    """The paths one scan read or probed (each absolute, as written: links are part of the state) and
    the folders whose listing it consulted."""

    paths: Set[str] = field(default_factory=set)
    folders: Set[str] = field(default_factory=set)


_LOG: ContextVar[Optional[InputLog]] = ContextVar("trainlint_input_log", default=None)


@contextlib.contextmanager
def recording_inputs() -> Iterator[InputLog]:
    """While the block runs, every path the scan notes goes to the log it yields."""
    log = InputLog()
    token = _LOG.set(log)
    try:
        yield log
    finally:
        _LOG.reset(token)


def note_path(path: PathLike) -> None:
    """The scan reads `path`, or looks whether it exists."""
    log = _LOG.get()
    if log is not None:
        log.paths.add(os.path.abspath(path))


def note_folder(folder: PathLike) -> None:
    """The scan looks for something in `folder` (found or not)."""
    log = _LOG.get()
    if log is not None:
        log.folders.add(os.path.abspath(folder))
