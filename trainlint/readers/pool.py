"""Reading many files at once, one worker process per core, for a cold scan.

Each reader is a pure function of a file's bytes and shown path, so the facts do not depend on which
process read them; results come back in the order asked, whatever order the workers finish in."""
from __future__ import annotations

import gc
import importlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, FrozenSet, List, Optional, Sequence, Tuple

from trainlint.cache import FactCache

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor


def read_shell(path: Path) -> Any:
    from trainlint.readers.shell import read_shell as read  # lazy: the shell reader (~12 ms) only when a script is read

    return read(path)


def read_json_config(path: Path) -> Any:
    from trainlint.readers.deepspeed import read_json_config as read  # lazy: tree-sitter only when JSON is read

    return read(path)


def read_python(path: Path) -> Any:
    from trainlint.readers.python import read_python as read  # lazy: libcst (~300 ms) only when Python is parsed

    return read(path)


def read_yaml_config(path: Path) -> Any:
    from trainlint.readers.yaml import read_yaml_config as read  # lazy: PyYAML only when YAML is parsed

    return read(path)


READERS: Dict[str, Callable[[Path], Any]] = {
    "shell": read_shell, "python": read_python, "yaml": read_yaml_config, "json": read_json_config,
}
# The readers imported on first use, by kind (libcst ~200 ms, PyYAML, the shell reader, tree-sitter).
_SLOW_IMPORTS = {"python": "trainlint.readers.python.loading", "yaml": "trainlint.readers.yaml",
                 "shell": "trainlint.readers.shell", "json": "trainlint.readers.deepspeed"}

# What reading one file of each kind costs, in milliseconds: the means of cold scans over 24 public training
# repositories (a Python file 20-25 ms, a launcher 2-3 ms, a recipe 1-2 ms). Only their ratio to the next
# figure matters.
READING_COST_MS = {"python": 23.0, "shell": 2.5, "yaml": 1.5, "json": 1.0}
# A wave is shared once its reading would take longer than this: forking the workers, the imports of the
# parsers they fork with and moving every file's facts back (~70 ms on two cores) must be won back by
# reading half of it each. A wave of launchers or recipes alone rarely is; a wave of entry scripts often.
MIN_PARALLEL_WORK_MS = 150.0
Job = Tuple[str, Path]


def reading_cost_ms(jobs: Sequence[Job]) -> float:
    return sum(READING_COST_MS.get(kind, 1.0) for kind, _ in jobs)


def default_processes() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


class ReadingPool:
    """Worker processes that read files for a cold scan. A scan reads in waves (launchers, then the entry
    scripts they run, then the modules those import); the workers start at the first wave worth sharing,
    forked once this process has imported the parsers that wave needs, so that they inherit them. A later
    wave that needs a parser they lack forks them again after importing it here: importing it in each
    worker would cost each the same, and this process the same again for the files it reads itself."""

    def __init__(self, processes: int, cache: Optional[FactCache] = None) -> None:
        self.processes = processes
        self.cache = cache
        self._executor: Optional[ProcessPoolExecutor] = None
        # The reader kinds this process had imported when the workers last forked (imports are never undone).
        self._forked_with: FrozenSet[str] = frozenset()

    def __enter__(self) -> "ReadingPool":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown()
            self._executor = None

    def read(self, jobs: Sequence[Job]) -> List[Any]:
        """The facts of each (reader kind, path), in order: in the workers when the wave is worth sharing,
        else here. Workers write what they read to `cache`, if any."""
        if self.processes <= 1 or len(jobs) < 2 or reading_cost_ms(jobs) < MIN_PARALLEL_WORK_MS:
            return [_read_one(kind, path, self.cache) for kind, path in jobs]
        kinds = frozenset(kind for kind, _ in jobs)
        if self._executor is not None and not kinds <= self._forked_with:
            self.close()
        # The workers fork at the first submission. With every object of this process in the collector's permanent
        # generation (unless the host program froze its own), their collections never walk, and so never copy page by
        # page, the heap they inherit.
        freezing = self._executor is None and gc.get_freeze_count() == 0
        if self._executor is None:
            # Imported here: multiprocessing and concurrent.futures (~10 ms) only for a scan large enough to share.
            from concurrent.futures import ProcessPoolExecutor

            _import_before_forking(kinds)
            self._forked_with = kinds | self._forked_with
            self._executor = ProcessPoolExecutor(max_workers=self.processes)
        # Largest files first, in small chunks: a wave ends when its slowest worker does, and one long training
        # script met last (or a chunk of several) would leave the other workers idle meanwhile.
        order = sorted(range(len(jobs)), key=lambda index: -_size(jobs[index][1]))
        chunk = max(1, len(jobs) // (self.processes * 16))
        results: List[Any] = [None] * len(jobs)
        if freezing:
            gc.freeze()
        try:
            read = self._executor.map(_read_one, [jobs[index][0] for index in order],
                                      [jobs[index][1] for index in order], [self.cache] * len(jobs),
                                      chunksize=chunk)
        finally:
            if freezing:
                gc.unfreeze()  # forked by now: this process collects as before
        for index, facts in zip(order, read):
            results[index] = facts
        return results


def _import_before_forking(kinds: FrozenSet[str]) -> None:
    """Import the parsers of `kinds` here, before the workers fork, so that they inherit them instead of each
    importing its own, and the files this process reads itself find them ready. Only those: a wave of launchers
    that leads to no Python file must not pay for libcst."""
    for kind in sorted(kinds):
        if kind in _SLOW_IMPORTS:
            importlib.import_module(_SLOW_IMPORTS[kind])


def read_many(jobs: Sequence[Job], processes: int, cache: Optional[FactCache] = None) -> List[Any]:
    """The facts of each (reader kind, path), in order, read by a pool that lives for this call only."""
    with ReadingPool(processes, cache) as pool:
        return pool.read(jobs)


def _read_one(kind: str, path: Path, cache: Optional[FactCache]) -> Any:
    reader = READERS[kind]
    if cache is None:
        return reader(path)
    return cache.read(kind, path, reader)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:  # gone or unreadable: the reader says why, in its turn
        return 0
