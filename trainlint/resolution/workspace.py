"""Reads each file once per scan and finds files the way the launched process would."""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Sequence, TypeVar

from trainlint.cache import FactCache
from trainlint.core import Setting
from trainlint.readers.deepspeed import read_json_config
from trainlint.readers.facts import ConfigFile, PythonModule, ShellScript
from trainlint.readers.python import read_python, resolve_import
from trainlint.readers.requirements import read_pin
from trainlint.readers.shell import read_shell
from trainlint.readers.yaml import read_yaml_config

T = TypeVar("T")
_REQUIREMENT_FILES = ("requirements.txt", "requirements/train.txt", "requirements/runtime.txt", "pyproject.toml",
                      "setup.py")


def transformers_pin(workspace: "Workspace", *paths: Optional[Path]) -> Optional[Setting]:
    """The `transformers==X` a repository pins, looked up from the entry script's folder upwards to
    the repository root (the first requirements file that names it wins)."""
    for start in [p for p in paths if p is not None]:
        folder = start.resolve().parent
        root = repo_root(folder) or folder
        for candidate_dir in [folder, *folder.parents]:
            for name in _REQUIREMENT_FILES:
                found = workspace.pin_in(candidate_dir / name, "transformers")
                if found is not None:
                    return found
            if candidate_dir == root:
                break
    return None


def repo_root(start: Path) -> Optional[Path]:
    for folder in [start, *start.parents]:
        if (folder / ".git").exists() or (folder / "pyproject.toml").exists() or (folder / "setup.py").exists():
            return folder
    return None


class Workspace:
    """A per-scan cache of parsed files (nothing global: two scans never share state)."""

    def __init__(self, invocation_dir: Optional[Path] = None, cache: Optional[FactCache] = None):
        self.invocation_dir = (invocation_dir or Path.cwd()).resolve()
        # Facts kept between runs (None: every file is read again).
        self.cache = cache
        self._shell: Dict[Path, ShellScript] = {}
        self._python: Dict[Path, PythonModule] = {}
        self._config: Dict[Path, ConfigFile] = {}
        self._pins: Dict[tuple, Optional[Setting]] = {}

    def shell(self, path: Path) -> ShellScript:
        key = path.resolve()
        if key not in self._shell:
            self._shell[key] = self._read("shell", path, read_shell)
        return self._shell[key]

    def python(self, path: Path) -> PythonModule:
        key = path.resolve()
        if key not in self._python:
            self._python[key] = self._read("python", path, read_python)
        return self._python[key]

    def config(self, path: Path) -> ConfigFile:
        key = path.resolve()
        if key not in self._config:
            if path.suffix.lower() in (".yaml", ".yml"):
                self._config[key] = self._read("yaml", path, read_yaml_config)
            else:
                self._config[key] = self._read("json", path, read_json_config)
        return self._config[key]

    def _read(self, kind: str, path: Path, reader: Callable[[Path], T]) -> T:
        return reader(path) if self.cache is None else self.cache.read(kind, path, reader)

    def _table(self, kind: str) -> dict:
        return {"shell": self._shell, "python": self._python, "yaml": self._config, "json": self._config}[kind]

    def has(self, kind: str, path: Path) -> bool:
        return path.resolve() in self._table(kind)

    def preload(self, kind: str, path: Path, facts) -> None:
        """Facts read elsewhere (by a worker process) for `path`, as `kind` would read them."""
        self._table(kind).setdefault(path.resolve(), facts)

    def load_cached(self, kind: str, path: Path) -> bool:
        """Take `path`'s facts from the cache if it has them."""
        found = self.cache.lookup(kind, path) if self.cache is not None else None
        if found is not None:
            self.preload(kind, path, found)
        return found is not None

    def pin_in(self, path: Path, package: str) -> Optional[Setting]:
        key = (path.resolve(), package)
        if key not in self._pins:
            self._pins[key] = read_pin(path, package) if path.is_file() else None
        return self._pins[key]

    def search_dirs(self, script: Path, cwd: Optional[str]) -> List[Path]:
        """Where a relative path in a launcher may point: the directory it `cd`s into, the directory
        trainlint was started in, then the script's folder and each folder above it."""
        script_dir = script.resolve().parent
        dirs: List[Path] = []
        if cwd:
            dirs.append((script_dir / cwd).resolve() if not Path(cwd).is_absolute() else Path(cwd))
        dirs.append(self.invocation_dir)
        dirs.extend([script_dir, *script_dir.parents])
        root = repo_root(script_dir)
        if root is not None:
            # Stop at the repository: folders above it are someone else's.
            dirs = [d for d in dirs if d == self.invocation_dir or root == d or root in d.parents]
        unique: List[Path] = []
        for folder in dirs:
            if folder not in unique:
                unique.append(folder)
        return unique

    @staticmethod
    def find(relative: str, dirs: Sequence[Path]) -> Optional[Path]:
        candidate = Path(relative)
        if candidate.is_absolute():
            return candidate if candidate.is_file() else None
        for folder in dirs:
            if (folder / candidate).is_file():
                return folder / candidate
        return None

    def module(self, dotted: str, importer: Path, dirs: Iterable[Path]) -> Optional[Path]:
        found = resolve_import(dotted, str(importer), [str(d) for d in dirs])
        return Path(found) if found else None
