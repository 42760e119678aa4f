"""One `trainlint fix` per tree at a time: an exclusive lock on `.trainlint-lock` at the tree root.

The lock file is removed on release; a waiter that locked a file someone has just removed sees that
its file is no longer the one at the path and tries again, so two processes never both hold it."""
from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path
from typing import Optional

LOCK_NAME = ".trainlint-lock"


class TreeBusy(Exception):
    """Another trainlint fix holds the tree."""


class TreeLock:
    def __init__(self, root: Path, wait_seconds: float = 3.0, poll_seconds: float = 0.05) -> None:
        self.path = Path(root) / LOCK_NAME
        self.wait_seconds = wait_seconds
        self.poll_seconds = poll_seconds
        self._descriptor: Optional[int] = None

    def acquire(self) -> None:
        deadline = time.monotonic() + self.wait_seconds
        while True:
            descriptor = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(descriptor)
                if time.monotonic() >= deadline:
                    raise TreeBusy(f"another trainlint fix is changing files under {self.path.parent} "
                                   f"(it holds {LOCK_NAME}); nothing was written, try again when it is done") from None
                time.sleep(self.poll_seconds)
                continue
            if _same_file(descriptor, self.path):
                self._descriptor = descriptor
                return
            os.close(descriptor)  # the holder removed it as we locked it: lock the new one

    def release(self) -> None:
        if self._descriptor is None:
            return
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
        os.close(self._descriptor)
        self._descriptor = None

    def __enter__(self) -> "TreeLock":
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def _same_file(descriptor: int, path: Path) -> bool:
    try:
        on_disk = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return False
    held = os.fstat(descriptor)
    return (held.st_dev, held.st_ino) == (on_disk.st_dev, on_disk.st_ino)
