"""Reading a cold scan's files in several processes gives the findings of one process."""
from __future__ import annotations

from pathlib import Path

import pytest

from trainlint.linter import lint, make_target
from trainlint.readers import pool
from trainlint.readers.pool import read_many
from trainlint.readers.python import read_python

SAMPLES = Path(__file__).parent / "samples"


def _summary(result):
    return [(f.code, f.path, f.origin.start_byte if f.origin else None, f.message) for f in result.findings]


@pytest.mark.parametrize("sample", sorted(p.name for p in SAMPLES.iterdir() if p.is_dir()))
def test_one_or_many_processes_find_the_same(sample, monkeypatch):
    monkeypatch.chdir(SAMPLES.parent)
    monkeypatch.setattr(pool, "MIN_PARALLEL_FILES", 1)  # the samples are small: use the pool anyway
    target = make_target("a100-40gb")
    serial = lint([SAMPLES / sample], target, processes=1)
    parallel = lint([SAMPLES / sample], target, processes=2)
    assert _summary(serial) == _summary(parallel)
    assert [run.id for run in serial.scan.runs] == [run.id for run in parallel.scan.runs]


def test_results_come_back_in_the_order_asked(monkeypatch):
    monkeypatch.chdir(SAMPLES.parent)
    files = sorted(SAMPLES.rglob("*.py"))[:12]
    assert len(files) >= pool.MIN_PARALLEL_FILES
    read = read_many([("python", path) for path in files], processes=2)
    assert read == [read_python(path) for path in files]


def test_the_collector_is_frozen_only_while_the_workers_fork(monkeypatch):
    """The workers inherit a frozen heap; the scanning process collects as before once they have forked, and a host
    program's own freeze is neither added to nor undone."""
    import gc

    monkeypatch.chdir(SAMPLES.parent)
    files = [("python", path) for path in sorted(SAMPLES.rglob("*.py"))[:12]]
    frozen_at_submission = []
    from concurrent.futures import ProcessPoolExecutor

    submit = ProcessPoolExecutor.submit

    def watching(self, *args, **kwargs):
        frozen_at_submission.append(gc.get_freeze_count())
        return submit(self, *args, **kwargs)

    monkeypatch.setattr(ProcessPoolExecutor, "submit", watching)
    assert gc.get_freeze_count() == 0
    read_many(files, processes=2)
    assert frozen_at_submission and frozen_at_submission[0] > 0  # the first submission forks the workers
    assert gc.get_freeze_count() == 0
    gc.freeze()
    try:
        held = gc.get_freeze_count()
        read_many(files, processes=2)
        assert gc.get_freeze_count() == held
    finally:
        gc.unfreeze()
