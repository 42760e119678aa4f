"""Where a launcher's `cd DIR` leads. bash resolves a relative DIR against the folder the script is run from, which
the script does not say: its own folder (`cd ..`), or the folder trainlint runs in, or the repository's root
(`bash scripts/run.sh` from the root, then `cd src/pkg`)."""
from __future__ import annotations

import os
from pathlib import Path
from typing import List, Optional

from trainlint.readers.source import safe_resolve


def cwd_candidates(script_dir: Path, cwd: str, invocation_dir: Path, repo_root: Optional[Path]) -> List[Path]:
    """The folders `cd cwd` may enter from a script in `script_dir`: those of the possible starts where it exists,
    or the one beside the script when it exists nowhere."""
    if Path(cwd).is_absolute():
        return [Path(cwd)]
    starts = [script_dir, invocation_dir] + ([repo_root] if repo_root is not None else [])
    found: List[Path] = []
    for start in starts:
        folder = safe_resolve(start / cwd)
        if os.path.isdir(folder) and folder not in found:
            found.append(folder)
    return found or [safe_resolve(script_dir / cwd)]
