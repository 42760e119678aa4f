"""A config file a fix would edit may be named by launchers the check did not read: `trainlint fix
scripts/finetune.sh` reads one launcher, and the `scripts/zero3.json` it names may serve every script of the
repository. Editing it would change those jobs too, so such an edit is refused, as one at a place other jobs of the
scan share is. A launcher or recipe of the repository (shell scripts and YAML files below the folder that holds
`.git`, `pyproject.toml` or `setup.py`) names a config when its text holds the config's file name: a mention that
may be another folder's copy counts too, the side that keeps a fix from reaching a job it was not planned for."""
from __future__ import annotations

from pathlib import Path
from typing import Dict, Iterable, List, Optional, Tuple

from trainlint.formats import FileKind
from trainlint.inputs import repo_root
from trainlint.readers.source import MAX_BYTES, display_path, safe_resolve
from trainlint.resolution import discover

# Files whose edits reach every job that names them; a launcher or an entry script is the job's own.
CONFIG_KINDS = frozenset({FileKind.JSON, FileKind.YAML})


class OutsideReaders:
    """The launchers and recipes of a config's repository that a check did not read, and that name the config."""

    def __init__(self, scanned: Iterable[str]) -> None:
        self._scanned = {safe_resolve(path) for path in scanned}
        self._found: Dict[Path, Tuple[str, ...]] = {}
        self._files: Dict[Path, List[Path]] = {}  # by repository root: its launchers and recipes
        self._texts: Dict[Path, Optional[bytes]] = {}

    def naming(self, config: str) -> Tuple[str, ...]:
        """Shown paths of the files outside the check that name `config` by its file name, sorted."""
        resolved = safe_resolve(config)
        if resolved not in self._found:
            self._found[resolved] = tuple(sorted(self._search(resolved)))
        return self._found[resolved]

    def _search(self, config: Path) -> List[str]:
        root = repo_root(config.parent)
        if root is None:
            return []
        name = config.name.encode("utf-8", "surrogateescape")
        if root not in self._files:
            self._files[root] = discover([root])[0]
        found = []
        for path in self._files[root]:
            resolved = safe_resolve(path)
            if resolved in self._scanned or resolved == config:
                continue
            text = self._text(resolved)
            if text is not None and name in text:
                found.append(display_path(path))
        return found

    def _text(self, path: Path) -> Optional[bytes]:
        if path not in self._texts:
            try:
                self._texts[path] = path.read_bytes() if path.stat().st_size <= MAX_BYTES else None
            except OSError:
                self._texts[path] = None
        return self._texts[path]


def outside_readers_problem(path: str, readers: Tuple[str, ...]) -> str:
    """Why an edit of the config at `path`, which `readers` name, is not made."""
    others = f" (and {len(readers) - 1} more)" if len(readers) > 1 else ""
    return (f"{path} is also named by {readers[0]}{others}, which this check did not read: editing it would change "
            "those jobs too; give this job a copy of its own, or change it by hand")
