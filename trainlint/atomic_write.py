"""Writing one file so that a reader never sees half of it: a temp file beside it, then a rename.

Layer 0: the fixers write rewritten sources with it, the command line writes reports, summaries and
baselines with it."""
from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import Optional


def write_atomically(path: Path, data: bytes, durable: bool = True) -> None:
    """Replace `path` with `data`; the file's permission bits are kept, and a symbolic link keeps
    pointing at the file it named (the file behind it is replaced, not the link).

    `durable` flushes the data to disk before the rename, so that a crash leaves the old file or the new one.
    A cache entry does without (`durable=False`): the rename still keeps other processes from seeing half
    of it, an entry a crash tore is read as corrupt and written again, and a flush per entry cost a cold
    scan of a large repository most of a second."""
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
            if durable:
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


def write_text_atomically(path: Path, text: str) -> None:
    """`text` as UTF-8 to `path`, creating the folders above it."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    write_atomically(Path(path), text.encode("utf-8"))
