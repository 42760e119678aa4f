"""A fix that touches several files writes all of them or none."""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Dict

from trainlint.atomic_write import write_atomically

__all__ = ["write_all", "write_atomically"]


def write_all(contents: Dict[Path, bytes], writer: Callable[[Path, bytes], None] = write_atomically) -> None:
    """Write several files, all or none: when one write fails, the ones already written get their
    old bytes back."""
    originals: Dict[Path, bytes] = {path: path.read_bytes() for path in contents if path.exists()}
    written = []
    try:
        for path, data in contents.items():
            writer(path, data)
            written.append(path)
    except BaseException:
        for path in written:
            if path in originals:
                write_atomically(path, originals[path])
        raise
