"""Writing files so that a reader never sees half of one: a temp file beside it, then a rename."""
from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import Callable, Dict, Optional


def write_atomically(path: Path, data: bytes) -> None:
    """Replace `path` with `data`; the file's permission bits are kept, and a symbolic link keeps
    pointing at the file it named (the file behind it is replaced, not the link)."""
    path = Path(os.path.realpath(path))
    mode: Optional[int] = None
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        pass
    handle, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".trainlint", dir=str(path.parent or "."))
    try:
        with os.fdopen(handle, "wb") as temp:
            temp.write(data)
            temp.flush()
            os.fsync(temp.fileno())
        if mode is not None:
            os.chmod(temp_name, mode)
        os.replace(temp_name, path)
    except BaseException:
        try:
            os.unlink(temp_name)
        except FileNotFoundError:
            pass
        raise


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
