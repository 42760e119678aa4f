"""`.gitignore` as the folder walk's filter: the files a repository ignores (build output, caches,
vendored checkouts) are not scanned unless `--no-respect-gitignore`. The rules of every `.gitignore`
from the repository root down to each folder apply, as git applies them; a path named on the
command line is always read."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import pathspec

from trainlint.resolution import SKIP_DIRS

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
    _specs: Dict[Path, Optional[pathspec.GitIgnoreSpec]] = field(default_factory=dict)

    def _spec(self, folder: Path) -> Optional[pathspec.GitIgnoreSpec]:
        if folder not in self._specs:
            try:
                lines = (folder / IGNORE_FILE).read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                lines = []
            self._specs[folder] = pathspec.GitIgnoreSpec.from_lines(lines) if lines else None
        return self._specs[folder]

    def ignores(self, path: Path, is_dir: bool = False) -> bool:
        """Whether git would ignore `path` (absolute, below `root`); the deepest matching rule wins."""
        verdict = False
        folders = [self.root, *[self.root.joinpath(*path.relative_to(self.root).parts[:depth])
                                for depth in range(1, len(path.relative_to(self.root).parts))]]
        for folder in folders:
            spec = self._spec(folder)
            if spec is None:
                continue
            relative = path.relative_to(folder).as_posix() + ("/" if is_dir else "")
            result = spec.check_file(relative)
            if result.include is not None:
                verdict = bool(result.include)
        return verdict


def ignored_paths(folders: Sequence[Path], suffixes: Sequence[str]) -> List[str]:
    """Paths below `folders` (as the walk spells them: relative to the working directory when below
    it) that git ignores: whole folders, and files with one of `suffixes` the walk would read."""
    found: List[str] = []
    for folder in folders:
        if not folder.is_dir():
            continue
        absolute = folder.resolve()
        root = _repository_root(absolute) or absolute
        rules = GitIgnore(root)
        for current, dirnames, filenames in os.walk(absolute):
            here = Path(current)
            kept = []
            for name in sorted(dirnames):
                if name.startswith(".") or name in SKIP_DIRS:
                    continue  # the folder walk never enters these
                if rules.ignores(here / name, is_dir=True):
                    found.append(_shown(here / name))
                else:
                    kept.append(name)
            dirnames[:] = kept
            found.extend(_shown(here / name) for name in sorted(filenames)
                         if Path(name).suffix.lower() in suffixes and rules.ignores(here / name))
    return found


def _shown(path: Path) -> str:
    try:
        return path.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.as_posix()

