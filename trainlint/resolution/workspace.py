"""Reads each file once per scan and finds files the way the launched process would.

Reading is confined: trainlint runs on pull requests from strangers, so a launcher that names
`/etc/passwd`, `../../secret.json`, `~/.ssh/config` or `.git/config` must not make it read that
file (its text would end up in messages). Only regular files inside the scanned tree are read
(unless `allow_outside_reads`), each one bounded in size, the whole scan bounded in bytes and time;
every file left unread gets a diagnostic saying why."""
from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple, TypeVar

from trainlint.cache import FactCache
from trainlint.core import Diagnostic, DiagnosticKind, FileKind, Setting, SourceKind, Unknown, VersionCeiling, file_kind
from trainlint.inputs import SKIP_DIRS, note_folder, note_path, repo_root, tree_roots, within
from trainlint.readers.facts import ClassHeaders, ConfigFile, PythonModule, ScriptCall, ShellScript
from trainlint.readers.hostfile import HostFile, read_hostfile
from trainlint.readers.requirements import read_ceiling, read_pin
from trainlint.readers.source import MAX_BYTES, named_path, not_regular, overlaid_bytes, read_source, safe_resolve
from trainlint.readers.yaml_screen import may_hold_key
from trainlint.resolution.launch_folder import cwd_candidates

__all__ = ["ReadBounds", "Workspace", "file_stamp", "held_elsewhere", "repo_root", "transformers_ceiling",
           "transformers_pin", "tree_roots"]

T = TypeVar("T")
# Where a folder may pin a package, in the order they are asked; `requirements*.txt` variants
# (`requirements_o2.6.txt`, `requirements-train.txt`) come after `requirements.txt`, by name.
_REQUIREMENT_FILES = ("requirements.txt", "requirements/train.txt", "requirements/runtime.txt", "pyproject.toml",
                      "setup.py", "setup.cfg", "environment.yml", "environment.yaml", "Dockerfile")
_REQUIREMENT_VARIANT = re.compile(r"requirements[-_.][^/]*\.txt")
# A submodule's folder in `.gitmodules` (git-config syntax: `path = LLaVA` under `[submodule "LLaVA"]`).
_SUBMODULE_PATH = re.compile(r"^\s*path\s*=\s*(\S[^\n]*?)\s*$", re.MULTILINE)
# Version-control metadata is never configuration, and `.git/config` may hold credentials.
_PRIVATE_DIRS = frozenset({".git", ".hg", ".svn"})

T = TypeVar("T")


@dataclass(frozen=True)
class ReadBounds:
    """How much one scan reads: per file, and in total (bytes and seconds)."""

    file_bytes: int = MAX_BYTES
    scan_bytes: int = 256 * 1024 * 1024
    scan_seconds: float = 120.0


def transformers_pin(workspace: "Workspace", *paths: Optional[Path]) -> Optional[Setting]:
    """The `transformers==X` a repository pins, looked up from the entry script's folder upwards to
    the repository root (the first requirements file that names it wins)."""
    for start in [p for p in paths if p is not None]:
        found = workspace.pin_above(workspace.resolved(start).parent, "transformers")
        if found is not None:
            return found
    return None


def transformers_ceiling(workspace: "Workspace", *paths: Optional[Path]) -> Optional[VersionCeiling]:
    """The first requirement that bounds `transformers` from above, looked up as `transformers_pin` looks."""
    for start in [p for p in paths if p is not None]:
        found = workspace.ceiling_above(workspace.resolved(start).parent, "transformers")
        if found is not None:
            return found
    return None


def _may_be_root(folder: Path) -> bool:
    """Whether `folder` has one of the files `trainlint.inputs.repo_root` stops at (then repo_root
    gives the folder itself)."""
    return any((folder / marker).exists() for marker in (".git", "pyproject.toml", "setup.py"))


def _expand_home(written: str) -> Path:
    return Path(os.path.expanduser(written)) if written.startswith("~") else Path(written)


class Workspace:
    """A per-scan cache of parsed files and the scan's reading budget (nothing global: two scans
    never share state). `roots` confine reading; None: set from the scanned paths by `confine_to`."""

    def __init__(self, invocation_dir: Optional[Path] = None, roots: Optional[Sequence[Path]] = None,
                 allow_outside_reads: bool = False, bounds: ReadBounds = ReadBounds(),
                 clock: Callable[[], float] = time.monotonic, cache: Optional[FactCache] = None):
        self.invocation_dir = safe_resolve(invocation_dir or Path.cwd())
        self.roots: Optional[List[Path]] = [safe_resolve(r) for r in roots] if roots is not None else None
        self.allow_outside_reads = allow_outside_reads
        self.bounds = bounds
        self._clock = clock
        self._started = clock()
        self._bytes_read = 0
        # Where each path leads, once per scan (the same paths are asked about for every job).
        self._resolved: Dict[Path, Path] = {}
        # Whether each resolved path is inside the tree (the roots are fixed once reading starts).
        self._inside: Dict[Path, bool] = {}
        # The file each import names, by (module, importer, folders searched).
        self._modules: Dict[Tuple[str, str, Tuple[str, ...]], Optional[str]] = {}
        # Files whose bytes are already counted (read here, or read ahead by a worker or the cache).
        self._reserved: Set[Path] = set()
        # Facts kept between runs (None: every file is read again).
        self.cache = cache
        self._shell: Dict[Path, ShellScript] = {}
        self._documented: Dict[Path, ShellScript] = {}
        self._python: Dict[Path, PythonModule] = {}
        # The classes each module defines, with their bases (read for the headers alone).
        self._class_headers: Dict[Path, ClassHeaders] = {}
        self._config: Dict[Path, ConfigFile] = {}
        # Whether each YAML file's text leaves room for given keys (or a bound), by (path, keys).
        self._screened: Dict[Tuple[Path, Tuple[str, ...]], bool] = {}
        self._pins: Dict[tuple, Optional[Setting]] = {}
        self._hostfiles: Dict[Path, Optional[HostFile]] = {}
        # Folder holding a `.gitmodules` -> the first submodule it declares that is not checked out (or "").
        self._submodules: Dict[Path, str] = {}
        self._pins_above: Dict[Tuple[Path, str], Optional[Setting]] = {}
        self._ceilings: Dict[Tuple[Path, str], Optional[VersionCeiling]] = {}
        self._ceilings_above: Dict[Tuple[Path, str], Optional[VersionCeiling]] = {}
        self._repo_roots: Dict[Path, Optional[Path]] = {}
        # Each file read, as it was when read (device, inode, size, mtime, ctime): a fix refuses to
        # write a file that has changed since.
        self.stamps: Dict[Path, Tuple[int, ...]] = {}

    # ------------------------------------------------------------ confinement
    def confine_to(self, paths: Sequence[Path]) -> None:
        """Reading stays inside the trees of `paths` (unless roots were given already)."""
        if self.roots is None:
            self.roots = tree_roots(paths, self.invocation_dir)
            self._inside.clear()

    def resolved(self, path: Path) -> Path:
        """`path` with its links followed, remembered for the scan."""
        found = self._resolved.get(path)
        if found is None:
            found = self._resolved[path] = safe_resolve(path)
        return found

    def inside(self, path: Path) -> bool:
        """Whether `path` (its links followed) is inside the scanned tree and outside version-control
        metadata. Without roots (no scan yet), the invocation directory is the tree."""
        resolved = self.resolved(path)
        known = self._inside.get(resolved)
        if known is None:
            known = self._inside[resolved] = self._inside_roots(resolved)
        return known

    def _inside_roots(self, resolved: Path) -> bool:
        for root in self.roots if self.roots is not None else [self.invocation_dir]:
            if within(resolved, root):
                return not _PRIVATE_DIRS & set(resolved.relative_to(root).parts)
        return False

    def refusal(self, path: Path) -> Optional[Diagnostic]:
        """Why `path` is not read (outside the tree, not a regular file, too large, the scan's budget
        spent), or None when it may be read."""
        note_path(path)
        shown = named_path(path)
        problem = not_regular(path, shown)
        outside = not self.allow_outside_reads and not self.inside(path)
        # Outside the tree, even whether a file exists is not for the tree to learn: unknown, not missing.
        if problem is not None and not (outside and problem.kind == DiagnosticKind.MISSING_FILE):
            return problem
        if outside:
            leads = f" (it leads to {safe_resolve(path)})" if os.path.islink(path) else ""
            return Diagnostic(DiagnosticKind.OUTSIDE_TREE,
                              f"{shown} is outside the scanned tree (or in version-control metadata){leads}; it was "
                              "not read and its settings are unknown (allow it with --allow-outside-reads)", shown)
        held = overlaid_bytes(path)
        size = len(held) if held is not None else os.stat(path).st_size
        if size > self.bounds.file_bytes:
            return Diagnostic(DiagnosticKind.UNREADABLE_FILE,
                              f"{shown} is {size} bytes; files over {self.bounds.file_bytes} bytes are skipped", shown)
        if self.resolved(path) not in self._reserved and self._bytes_read + size > self.bounds.scan_bytes:
            return Diagnostic(DiagnosticKind.UNREADABLE_FILE,
                              f"{shown} was skipped: the scan already read {self._bytes_read} bytes "
                              f"(at most {self.bounds.scan_bytes} per scan)", shown)
        elapsed = self._clock() - self._started
        if elapsed > self.bounds.scan_seconds:
            return Diagnostic(DiagnosticKind.UNREADABLE_FILE,
                              f"{shown} was skipped: the scan ran for {elapsed:.0f} s "
                              f"(at most {self.bounds.scan_seconds:.0f} s per scan)", shown)
        return None

    def _read(self, kind: str, path: Path, cache: Dict[Path, T], reader: Callable[[Path], T],
              refused: Callable[[Diagnostic], T]) -> T:
        key = self.resolved(path)
        if key not in cache:
            try:
                problem = self.refusal(path)
            except OSError as err:
                shown = named_path(path)
                problem = Diagnostic(DiagnosticKind.UNREADABLE_FILE, f"cannot read {shown}: {err.strerror or err}",
                                     shown)
            if problem is not None:
                cache[key] = refused(problem)
            else:
                self._count(key, path)
                cache[key] = self._parse(kind, path, reader)
        return cache[key]

    # ------------------------------------------------------------ readers
    def shell(self, path: Path) -> ShellScript:
        return self._read("shell", path, self._shell, _read_shell,
                          lambda problem: ShellScript(path=problem.path, launches=(), diagnostics=(problem,)))

    def called_shell(self, path: Path, call: ScriptCall) -> Optional[ShellScript]:
        """The script at `path` as `call` runs it, with the caller's arguments as `$1`, `$2`, ...; None when it may
        not be read (the script read by itself reports why). Never cached: the facts depend on the caller."""
        if self.refusal(path) is not None:
            return None
        self._count(self.resolved(path), path)
        from trainlint.readers.shell import read_shell  # lazy, as in _read_shell

        return read_shell(path, call)

    def documented(self, path: Path) -> ShellScript:
        """The launches the shell code blocks of the Markdown document at `path` show (none for a document it may
        not read)."""
        return self._read("markdown", path, self._documented, _read_documented_commands,
                          lambda problem: ShellScript(path=problem.path, launches=()))

    def class_headers(self, path: Path) -> ClassHeaders:
        """The classes the module at `path` defines with their bases as written, and its forward-only step gates;
        none for a file it may not read."""
        key = self.resolved(path)
        if key not in self._class_headers:
            from trainlint.readers.python.class_bases import read_class_headers  # lazy, as the Python reader is

            self._class_headers[key] = read_class_headers(path) if self.may_read(path) else ClassHeaders()
        return self._class_headers[key]

    def python(self, path: Path) -> PythonModule:
        return self._read("python", path, self._python, _read_python,
                          lambda problem: PythonModule(path=problem.path, diagnostics=(problem,)))

    def config(self, path: Path) -> ConfigFile:
        is_yaml = file_kind(path) == FileKind.YAML
        reader = _read_yaml_config if is_yaml else _read_json_config
        return self._read("yaml" if is_yaml else "json", path, self._config, reader,
                          lambda problem: _unread_config(problem, is_yaml))

    def yaml_may_matter(self, path: Path, keys: Sequence[str]) -> bool:
        """Whether reading the YAML file `path` in full may find one of `keys`. False only when its text rules
        that out (`trainlint.readers.yaml_screen`): a scan then need not parse it, and whatever a parse would
        leave unread (a lock file nested past the reader's bounds) cannot hold a setting either. The file is
        checked, stamped and counted against the budget as a read is; a file that cannot be read may matter
        (the full read says why)."""
        key = self.resolved(path)
        if key in self._config:
            return True
        screen_key = (key, tuple(keys))
        if screen_key not in self._screened:
            self._screened[screen_key] = self._screen_yaml(key, path, keys)
        return self._screened[screen_key]

    def _screen_yaml(self, key: Path, path: Path, keys: Sequence[str]) -> bool:
        try:
            if self.refusal(path) is not None:
                return True
        except OSError:
            return True
        self._count(key, path)
        source = read_source(path)
        if isinstance(source, Diagnostic):
            return True
        return may_hold_key(source.data, keys)

    def _parse(self, kind: str, path: Path, reader: Callable[[Path], T]) -> T:
        return reader(path) if self.cache is None else self.cache.read(kind, path, reader)

    def _table(self, kind: str) -> dict:
        return {"shell": self._shell, "python": self._python, "yaml": self._config, "json": self._config,
                "markdown": self._documented}[kind]

    def has(self, kind: str, path: Path) -> bool:
        return self.resolved(path) in self._table(kind)

    def may_read(self, path: Path) -> bool:
        """Whether `path` passes the same checks as a read here (inside the tree, a regular file, within
        the budgets), its bytes then counted against the scan's budget as if read: files that do not
        are left to `_read`, which reports why."""
        try:
            if self.refusal(path) is not None:
                return False
            self._count(self.resolved(path), path)
        except OSError:
            return False
        return True

    def _count(self, key: Path, path: Path) -> None:
        """Stamp `path` and count its bytes against the scan's budget, once."""
        if key in self._reserved:
            return
        self._reserved.add(key)
        note_path(path)
        self.stamps[key] = file_stamp(path)
        self._bytes_read += self.stamps[key][2]

    def preload(self, kind: str, path: Path, facts) -> None:
        """Facts read elsewhere (by a worker process, or the cache) for `path`, as `kind` would read them;
        the file is stamped and counted as if read here."""
        key = self.resolved(path)
        table = self._table(kind)
        if key in table:
            return
        self._count(key, path)
        table[key] = facts

    def load_cached(self, kind: str, path: Path) -> bool:
        """Take `path`'s facts from the cache if it has them."""
        found = self.cache.lookup(kind, path) if self.cache is not None else None
        if found is not None:
            self.preload(kind, path, found)
        return found is not None

    def pin_above(self, folder: Path, package: str) -> Optional[Setting]:
        """The pin of `package` in the first requirements file that names it, from `folder` upwards to
        its repository's root (once per folder and scan: every job of a repository asks)."""
        return self._first_requirement_above(self._pins_above, folder, package, lambda path: self.pin_in(path, package))

    def _first_requirement_above(self, memo: Dict[Tuple[Path, str], Optional[T]], folder: Path, package: str,
                                 ask: Callable[[Path], Optional[T]]) -> Optional[T]:
        """The first answer `ask` gives for a requirements file, in `folder` then each folder above it up to
        its repository's root (outside any repository, the top of the scanned tree holding it). Remembered in
        `memo` for every folder on the way up: the launchers and recipes of one repository share the folders above
        them."""
        key = (folder, package)
        if key in memo:
            return memo[key]
        names = (*_REQUIREMENT_FILES[:1], *self._requirement_variants(folder), *_REQUIREMENT_FILES[1:])
        found = next((answer for answer in map(ask, (folder / name for name in names)) if answer is not None), None)
        if found is None:
            # Outside any repository (a tree unpacked from an archive), the scanned tree's top is the root.
            root = self.repo_root(folder) or next((top for top in self.roots or () if within(folder, top)), folder)
            if folder != root and folder.parent != folder:
                found = self._first_requirement_above(memo, folder.parent, package, ask)
        memo[key] = found
        return found

    def ceiling_above(self, folder: Path, package: str) -> Optional[VersionCeiling]:
        """The upper bound on `package` of the first requirements file that bounds it, from `folder` up to
        its repository's root, in the order `pin_above` looks."""
        return self._first_requirement_above(self._ceilings_above, folder, package,
                                             lambda path: self.ceiling_in(path, package))

    def ceiling_in(self, path: Path, package: str) -> Optional[VersionCeiling]:
        key = (self.resolved(path), package)
        if key not in self._ceilings:
            note_path(path)
            readable = path.is_file() and self.inside(path) and not_regular(path, str(path)) is None
            self._ceilings[key] = read_ceiling(path, package) if readable else None
        return self._ceilings[key]

    def _requirement_variants(self, folder: Path) -> List[str]:
        """`requirements*.txt` variants in `folder`, listed only inside the scanned tree: above it (the walk may
        reach `/tmp` or the home folder) a listing changes with every file anyone writes there, and a stored
        result that depends on it would never be reused."""
        if not self.inside(folder):
            return []
        note_folder(folder)  # a variant added later changes the answer
        try:
            names = os.listdir(folder)
        except OSError:
            return []
        return sorted(name for name in names if _REQUIREMENT_VARIANT.fullmatch(name))

    def repo_root(self, folder: Path) -> Optional[Path]:
        """`trainlint.inputs.repo_root(folder)`, remembered for every folder on the way up."""
        if folder not in self._repo_roots:
            marked = _may_be_root(folder)
            above = None if marked or folder.parent == folder else self.repo_root(folder.parent)
            self._repo_roots[folder] = folder if marked else above
        return self._repo_roots[folder]

    def unpopulated_submodule(self, script: Path) -> Optional[str]:
        """A git submodule the repository around `script` declares (`.gitmodules`) whose folder is missing or
        empty: a launcher may be meant to run from inside it, where the files it names are out of view."""
        folder = self.resolved(script).parent
        for candidate in [folder, *folder.parents]:
            if not self.inside(candidate):
                return None
            if candidate not in self._submodules:
                self._submodules[candidate] = _unpopulated_in(self, candidate)
            if self._submodules[candidate] is not None:
                return self._submodules[candidate] or None
        return None

    def hostfile(self, path: Path) -> Optional[HostFile]:
        """The DeepSpeed hostfile at `path`, or None when it is not in the tree (or not a regular file)."""
        key = self.resolved(path)
        if key not in self._hostfiles:
            note_path(path)
            readable = path.is_file() and self.inside(path) and not_regular(path, str(path)) is None
            self._hostfiles[key] = read_hostfile(path) if readable else None
        return self._hostfiles[key]

    def pin_in(self, path: Path, package: str) -> Optional[Setting]:
        key = (self.resolved(path), package)
        if key not in self._pins:
            note_path(path)
            readable = path.is_file() and self.inside(path) and not_regular(path, str(path)) is None
            self._pins[key] = read_pin(path, package) if readable else None
        return self._pins[key]

    # ------------------------------------------------------------ finding files
    def search_dirs(self, script: Path, cwd: Optional[str]) -> List[Path]:
        """Where a relative path in a launcher may point: the directory it `cd`s into, the directory
        trainlint was started in, then the script's folder and each folder above it."""
        script_dir = safe_resolve(script).parent
        dirs: List[Path] = []
        if cwd:
            dirs.extend(cwd_candidates(script_dir, cwd, self.invocation_dir, self.repo_root(script_dir)))
        dirs.append(self.invocation_dir)
        dirs.extend([script_dir, *script_dir.parents])
        root = self.repo_root(script_dir)
        if root is not None:
            # Stop at the repository: folders above it are someone else's.
            dirs = [d for d in dirs if d == self.invocation_dir or root == d or root in d.parents]
        unique: List[Path] = []
        for folder in dirs:
            if folder not in unique:
                unique.append(folder)
                if self.allow_outside_reads or self.inside(folder):
                    # Callers look for modules and packages here, found or not. A folder outside the tree is
                    # never looked into (`find` and `module` skip it), and its listing (`/tmp`, the home
                    # folder) changes with every file anyone writes there: a stored result must not hang on it.
                    note_folder(folder)
        return unique

    def find(self, relative: str, dirs: Sequence[Path]) -> Optional[Path]:
        """The file a launcher's path names, or None when it names nothing there is. A path that
        leaves the scanned tree (absolute, `~/...`, `../..`) is returned as named when nothing
        inside the tree matches: reading it is refused later, with a diagnostic, so the job's
        values from it are unknown rather than the file "missing"."""
        candidate = _expand_home(relative)
        if candidate.is_absolute():
            if not self.allow_outside_reads and not self.inside(candidate):
                return candidate
            return candidate if _exists(candidate) else None
        for folder in dirs:
            path = folder / candidate
            if (self.allow_outside_reads or self.inside(path)) and _exists(path):
                return path
        for folder in dirs:
            # `open_flamingo/open_flamingo/train/train.py`: a script meant to run from the folder that holds the
            # checkout names the repository's own folder first; the file is the checkout's.
            if len(candidate.parts) > 1 and candidate.parts[0] == folder.name and self.repo_root(folder) == folder:
                path = folder.joinpath(*candidate.parts[1:])
                if self.inside(path) and _exists(path):
                    return path
        if self.allow_outside_reads:
            return None
        # `../../x.json`: from every folder of the tree it leaves the tree.
        from_tree = [folder / candidate for folder in dirs if self.inside(folder)]
        if from_tree and not any(self.inside(path) for path in from_tree):
            return from_tree[0]
        return None

    def module(self, dotted: str, importer: Path, dirs: Iterable[Path]) -> Optional[Path]:
        from trainlint.readers.python import resolve_import  # lazy: the package imports libcst (~300 ms)

        allowed = [d for d in dirs if self.allow_outside_reads or self.inside(d)]
        key = (dotted, str(importer), tuple(str(d) for d in allowed))
        if key not in self._modules:
            # A repository laid out with its packages under `src/` (setuptools' `package_dir={"": "src"}`) imports
            # them by name once installed: `from alpaca_farm.trainer import ...` is `src/alpaca_farm/trainer.py`.
            searched = allowed + [d / "src" for d in allowed if self.repo_root(d) == d and os.path.isdir(d / "src")
                                  and d / "src" not in allowed]
            _note_module_folders(dotted, importer, searched)
            self._modules[key] = resolve_import(dotted, str(importer), [str(d) for d in searched])
        found = self._modules[key]
        return Path(found) if found else None


def _unpopulated_in(workspace: "Workspace", folder: Path) -> Optional[str]:
    """The first submodule `folder/.gitmodules` declares that is not checked out ("" when all are); None
    without a `.gitmodules` there."""
    declared = folder / ".gitmodules"
    note_path(declared)
    source = read_source(declared) if declared.is_file() else None
    if source is None or isinstance(source, Diagnostic):
        return None
    for found in _SUBMODULE_PATH.finditer(source.text):
        target = folder / found.group(1).strip()
        note_folder(target)
        if workspace.inside(target) and (not target.is_dir() or not any(target.iterdir())):
            return found.group(1).strip()
    return ""


def _read_shell(path: Path) -> ShellScript:
    from trainlint.readers.shell import read_shell  # lazy: the shell reader (~12 ms) only when a script is read

    return read_shell(path)


def _read_documented_commands(path: Path) -> ShellScript:
    from trainlint.readers.markdown import read_documented_commands  # lazy: markdown-it only when a document is read

    return read_documented_commands(path)


def _read_json_config(path: Path) -> ConfigFile:
    from trainlint.readers.deepspeed import read_json_config  # lazy: tree-sitter only when a JSON file is read

    return read_json_config(path)


def _read_python(path: Path) -> PythonModule:
    from trainlint.readers.python import read_python  # lazy: libcst only when a file is parsed, not on a cache hit

    return read_python(path)


def _read_yaml_config(path: Path) -> ConfigFile:
    from trainlint.readers.yaml import read_yaml_config  # lazy: PyYAML only when a YAML file is parsed

    return read_yaml_config(path)


def file_stamp(path: Path) -> Tuple[int, ...]:
    held = overlaid_bytes(path)
    if held is not None and not os.path.lexists(path):  # a file `fix --diff` created in memory
        return (0, 0, len(held), 0, 0)
    info = os.stat(path)
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def _note_module_folders(dotted: str, importer: Path, dirs: Iterable[Path]) -> None:
    """The folders an import of `dotted` is looked for in (`pkg/mod.py` or `pkg/mod/__init__.py` below
    each folder, or below the importer's for `.mod`): whether it is found depends on their listings."""
    dots = len(dotted) - len(dotted.lstrip("."))
    parts = [part for part in dotted.lstrip(".").split(".") if part]
    bases = list(dirs)
    if dots:
        base = importer.parent
        for _ in range(dots - 1):
            base = base.parent
        bases = [base]
    for base in bases:
        note_folder(base.joinpath(*parts[:-1]) if parts else base)
        note_folder(base.joinpath(*parts))


def held_elsewhere(workspace: Workspace, relative: str) -> Optional[Path]:
    """The folder of the scanned tree (nearest its root) that holds `relative`, a path of two or more parts
    (`src/open_r1/grpo.py`): a launch that names it may be meant to run from there. None when none does."""
    parts = Path(relative).parts
    if len(parts) < 2 or Path(relative).is_absolute() or ".." in parts or relative.startswith("~"):
        return None
    for root in workspace.roots if workspace.roots is not None else [workspace.invocation_dir]:
        for folder, subfolders, _files in os.walk(root):
            # Version control, environments, caches and build output hold no launch's working folder: the
            # folders the discovery walk skips.
            subfolders[:] = sorted(d for d in subfolders if not d.startswith(".") and d not in SKIP_DIRS)
            note_folder(Path(folder))
            if _exists(Path(folder) / relative):
                return Path(folder)
    return None


def _exists(path: Path) -> bool:
    """Something is there that is not a folder (a FIFO or a device counts: reading it is refused
    with a diagnostic that says what it is, rather than calling it missing)."""
    note_path(path)
    if overlaid_bytes(path) is not None:  # a file `fix --diff` created in memory
        return True
    try:
        return os.path.lexists(path) and not path.is_dir()
    except OSError:
        return True


def _unread_config(problem: Diagnostic, is_yaml: bool) -> ConfigFile:
    """An unread config: nothing is known of it. For a DeepSpeed JSON, the ZeRO stage is said to be
    unknown, so that the job is not taken for one without ZeRO."""
    values = {}
    if not is_yaml:
        values["zero_optimization.stage"] = Setting(Unknown(f"{problem.path} was not read"), SourceKind.CONFIG_FILE,
                                                    None, note="zero_optimization.stage")
    return ConfigFile(path=problem.path, format="yaml" if is_yaml else "json", values=values,
                      diagnostics=(problem,))
