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
    monkeypatch.setattr(pool, "MIN_PARALLEL_WORK_MS", 0)  # the samples are small: use the pool anyway
    target = make_target("a100-40gb")
    serial = lint([SAMPLES / sample], target, processes=1)
    parallel = lint([SAMPLES / sample], target, processes=2)
    assert _summary(serial) == _summary(parallel)
    assert [run.id for run in serial.scan.runs] == [run.id for run in parallel.scan.runs]


def test_results_come_back_in_the_order_asked(monkeypatch):
    monkeypatch.chdir(SAMPLES.parent)
    files = sorted(SAMPLES.rglob("*.py"))[:12]
    assert pool.reading_cost_ms([("python", path) for path in files]) >= pool.MIN_PARALLEL_WORK_MS
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


def test_a_wave_needing_a_parser_the_workers_lack_forks_them_again(monkeypatch, tmp_path):
    """Workers forked for a wave of launchers have no libcst: the wave of entry scripts after it is read by
    workers forked once the parent has imported the Python reader, and a wave they can read keeps them."""
    monkeypatch.setattr(pool, "MIN_PARALLEL_WORK_MS", 0)
    scripts = []
    for number in range(4):
        (tmp_path / f"run{number}.sh").write_text(f"torchrun train{number}.py --per_device_train_batch_size 2\n")
        (tmp_path / f"train{number}.py").write_text(f"LEARNING_RATE = {number}e-5\n")
        scripts.append(tmp_path / f"run{number}.sh")
    with pool.ReadingPool(2) as reading:
        launchers = reading.read([("shell", path) for path in scripts])
        for_launchers = reading._executor
        entries = reading.read([("python", tmp_path / f"train{number}.py") for number in range(4)])
        for_entries = reading._executor
        again = reading.read([("shell", path) for path in scripts])
        assert for_launchers is not None and for_entries is not None and for_entries is not for_launchers
        assert reading._executor is for_entries
    assert [launch.entry.value for script in launchers for launch in script.launches] == [
        f"train{number}.py" for number in range(4)]
    assert entries == [read_python(tmp_path / f"train{number}.py") for number in range(4)]
    assert again == launchers


def test_a_wave_too_small_to_share_is_read_here(monkeypatch, tmp_path):
    for number in range(20):
        (tmp_path / f"run{number}.sh").write_text("deepspeed train.py --per_device_train_batch_size 4\n")
    scripts = [("shell", tmp_path / f"run{number}.sh") for number in range(20)]
    assert pool.reading_cost_ms(scripts) < pool.MIN_PARALLEL_WORK_MS
    with pool.ReadingPool(2) as reading:
        read = reading.read(scripts)
        assert reading._executor is None
    assert [len(script.launches) for script in read] == [1] * 20
