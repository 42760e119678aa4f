"""Writing one file atomically; a fix round writes its files with `trainlint.fixers.transaction`."""
from __future__ import annotations

from trainlint.atomic_write import write_atomically

__all__ = ["write_atomically"]
