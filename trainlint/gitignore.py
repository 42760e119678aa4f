"""`.gitignore` as the folder walk's filter: the files a repository ignores (build output, caches,
vendored checkouts) are not scanned unless `--no-respect-gitignore`. The rules of every `.gitignore`
from the repository root down to each folder apply, as git applies them; a path named on the
command line is always read."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Tuple

from trainlint.resolution import SKIP_DIRS

if TYPE_CHECKING:
    import pathspec

IGNORE_FILE = ".gitignore"


def _repository_root(start: Path) -> Optional[Path]:
    for folder in [start, *start.parents]:
        if (folder / ".git").exists():
            return folder
    return None


@dataclass
class GitIgnore:
    """The `.gitignore` rules that apply below `root` (each spec anchored at its own folder)."""

    root: Path
    # Folder (as a string) -> its spec, None when it has no rules.
    _specs: Dict[str, Optional[pathspec.GitIgnoreSpec]] = field(default_factory=dict)

    def _spec(self, folder: str) -> Optional[pathspec.GitIgnoreSpec]:
        if folder not in self._specs:
            try:
                with open(os.path.join(folder, IGNORE_FILE), encoding="utf-8", errors="replace") as handle:
                    lines = handle.read().splitlines()
            except OSError:
                lines = []
            self._specs[folder] = _spec_of(lines) if lines else None
        return self._specs[folder]

    def rules_for(self, folder: str) -> List[Tuple[pathspec.GitIgnoreSpec, str]]:
        """The specs that apply to the entries of `folder` (absolute, at or below `root`), shallowest
        first, each with `folder` relative to the spec's own folder (empty, or ending in `/`)."""
        relative = os.path.relpath(folder, self.root)
        parts = [] if relative == os.curdir else relative.split(os.sep)
        rules = []
        base = str(self.root)
        for depth in range(len(parts) + 1):
            spec = self._spec(base)
            if spec is not None:
                rules.append((spec, "".join(part + "/" for part in parts[depth:])))
            if depth < len(parts):
                base = os.path.join(base, parts[depth])
        return rules

    def ignores(self, path: Path, is_dir: bool = False) -> bool:
        """Whether git would ignore `path` (absolute, below `root`); the deepest matching rule wins."""
        return _ignored(self.rules_for(str(path.parent)), path.name, is_dir)


def ignored_by_repository(path: str) -> bool:
    """Whether the `.gitignore` files of the git repository around `path` ignore it (False outside a repository)."""
    absolute = Path(os.path.abspath(path))
    root = _repository_root(absolute.parent)
    return root is not None and GitIgnore(root).ignores(absolute)


def _spec_of(lines: List[str]) -> pathspec.GitIgnoreSpec:
    import pathspec  # ~10 ms: only once a folder has a .gitignore with rules

    return pathspec.GitIgnoreSpec.from_lines(lines)


def _ignored(rules: Sequence[Tuple[pathspec.GitIgnoreSpec, str]], name: str, is_dir: bool) -> bool:
    verdict = False
    for spec, prefix in rules:
        result = spec.check_file(prefix + name + ("/" if is_dir else ""))
        if result.include is not None:
            verdict = bool(result.include)
    return verdict


def ignored_paths(folders: Sequence[Path], suffixes: Sequence[str]) -> List[str]:
    """Paths below `folders` (as the walk spells them: relative to the working directory when below
    it) that git ignores: whole folders, and files with one of `suffixes` the walk would read."""
    found: List[str] = []
    shown = _Shown(str(Path.cwd().resolve()))
    wanted = tuple(suffixes)
    for folder in folders:
        if not folder.is_dir():
            continue
        absolute = folder.resolve()
        root = _repository_root(absolute) or absolute
        ignore = GitIgnore(root)
        for current, dirnames, filenames in os.walk(absolute):
            rules = ignore.rules_for(current)
            if not rules:  # no .gitignore from the root down to here: nothing below it is ignored by one above
                dirnames[:] = sorted(name for name in dirnames if not name.startswith(".") and name not in SKIP_DIRS)
                continue
            kept = []
            for name in sorted(dirnames):
                if name.startswith(".") or name in SKIP_DIRS:
                    continue  # the folder walk never enters these
                if _ignored(rules, name, is_dir=True):
                    found.append(shown(os.path.join(current, name)))
                else:
                    kept.append(name)
            dirnames[:] = kept
            found.extend(shown(os.path.join(current, name)) for name in sorted(filenames)
                         if _suffix(name) in wanted and _ignored(rules, name, is_dir=False))
    return found


def _suffix(name: str) -> str:
    """`Path(name).suffix.lower()`, without building a Path."""
    dot = name.rfind(".")
    return name[dot:].lower() if 0 < dot < len(name) - 1 else ""


@dataclass(frozen=True)
class _Shown:
    """A path as the walk spells it: relative to the working directory `cwd` when below it."""

    cwd: str

    def __call__(self, path: str) -> str:
        if path == self.cwd:
            return "."
        prefix = self.cwd if self.cwd.endswith("/") else self.cwd + "/"
        return path[len(prefix):] if path.startswith(prefix) else path
