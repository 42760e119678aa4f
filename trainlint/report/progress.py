"""A progress bar on stderr while a long scan reads its files: only on a terminal, never in CI, and only
once the scan has taken longer than a second (a quick scan prints nothing)."""
from __future__ import annotations

import os
import sys
import time
from typing import Callable, Optional, TextIO

DELAY_SECONDS = 1.0


def wanted(stream: TextIO) -> bool:
    ci = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")
    return not ci and hasattr(stream, "isatty") and stream.isatty()


class ScanProgress:
    """`progress(done, total)` for trainlint.api.ScanOptions; `close()` clears the bar."""

    def __init__(self, stream: TextIO, clock: Callable[[], float] = time.monotonic):
        self._stream = stream
        self._clock = clock
        self._started = clock()
        self._bar = None
        self._task = None

    def __call__(self, done: int, total: int) -> None:
        if self._bar is None:
            if self._clock() - self._started < DELAY_SECONDS:
                return
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

            self._bar = Progress(TextColumn("reading files"), BarColumn(), MofNCompleteColumn(),
                                 console=Console(file=self._stream), transient=True)
            self._bar.start()
            self._task = self._bar.add_task("read", total=total)
        self._bar.update(self._task, completed=done, total=total)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()


def scan_progress(stream: Optional[TextIO] = None) -> Optional[ScanProgress]:
    """A progress bar for the current stderr, or None where none is wanted."""
    stream = sys.stderr if stream is None else stream
    return ScanProgress(stream) if wanted(stream) else None
