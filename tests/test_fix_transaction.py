"""A fix round writes all of its files or none, whatever happens: a crash at any step (the next
trainlint command completes or rolls it back), a signal, a file changed behind trainlint's back,
a second fix on the same tree, a read-only file. Modes and owners are kept.

The crash tests run the fix in a subprocess with TRAINLINT_FAULT_AT (see
trainlint/fixers/transaction.py), which ends it with os._exit at the named step, as SIGKILL would.
A longer run by hand, every step of a 3-file transaction many times over and random SIGKILLs of a
real `trainlint fix`:

    TRAINLINT_LONG_FAULTS=200 .venv/bin/python -m pytest -q tests/test_fix_transaction.py -k long
"""
from __future__ import annotations

import os
import random
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.conftest import write_tree
from trainlint.checks._examples import job
from trainlint.fixers.edits import unified_diff
from trainlint.fixers.engine import FixSession
from trainlint.fixers.journal import JOURNAL_NAME, recover
from trainlint.fixers.lock import LOCK_NAME, TreeLock
from trainlint.fixers.transaction import FileChange, FixRefused, Transaction, staged_leftovers
from trainlint.linter import Selection, lint, make_target

ROOT = Path(__file__).resolve().parents[1]
MOE_FLAGS = """--deepspeed zero2.json
--model_name_or_path lmsys/vicuna-7b-v1.5
--per_device_train_batch_size 8
--gradient_accumulation_steps 2
--bf16 True
--model_max_length 2048
--gradient_checkpointing True"""
ZERO2 = """{
  "bf16": {"enabled": "auto"},
  "train_micro_batch_size_per_gpu": 8,
  "gradient_accumulation_steps": 2,
  "zero_optimization": {"stage": 2, "reduce_bucket_size": "auto"}
}
"""
FIX_ARGS = ("fix", "--gpu", "a100-40gb", "--preserve-effective-batch", "--select", "TL101", ".")

TRANSACTION_SCRIPT = textwrap.dedent("""
    import sys
    from pathlib import Path
    from trainlint.fixers.transaction import FileChange, Transaction
    root = Path(sys.argv[1])
    names = ["a.sh", "b.json", "c.yaml"]
    changes = [FileChange(root / n, (root / n).read_bytes(), b"new " + n.encode() + b"\\n") for n in names]
    Transaction(root, [root]).apply(changes)
""")


def _trainlint(folder: Path, *argv: str, fault: str = "") -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("TRAINLINT_FAULT_AT", None)
    if fault:
        env["TRAINLINT_FAULT_AT"] = fault
    return subprocess.run([sys.executable, "-m", "trainlint", *argv], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=60)


def _snapshot(root: Path):
    """Every file of the tree but the reader cache `check` keeps (not part of any fix)."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".trainlint_cache" not in p.relative_to(root).parts}


def _three_files(root: Path):
    (root / ".git").mkdir(parents=True, exist_ok=True)
    write_tree(root, {"a.sh": "old a\n", "b.json": "old b\n", "c.yaml": "old c\n"})
    return {"a.sh": b"old a\n", "b.json": b"old b\n", "c.yaml": b"old c\n"}


def _new():
    return {"a.sh": b"new a.sh\n", "b.json": b"new b.json\n", "c.yaml": b"new c.yaml\n"}


def _crash_transaction(root: Path, fault: str) -> int:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TRAINLINT_FAULT_AT": fault}
    return subprocess.run([sys.executable, "-c", TRANSACTION_SCRIPT, str(root)], env=env, timeout=60).returncode


def _files(root: Path):
    return {name: (root / name).read_bytes() for name in ("a.sh", "b.json", "c.yaml")}


@pytest.mark.parametrize("fault", ["stage:1", "stage:3", "rename:1", "rename:2", "rename:3"])
def test_a_crash_at_any_step_of_a_three_file_fix_leaves_all_old_or_all_new(tmp_path: Path, fault: str):
    old = _three_files(tmp_path)
    assert _crash_transaction(tmp_path, fault) == 137
    assert (tmp_path / JOURNAL_NAME).exists()  # the crash left its journal behind
    assert _trainlint(tmp_path, "check", ".").returncode in (0, 1)  # any next command settles it
    expected = old if fault.startswith("stage") else _new()
    assert _files(tmp_path) == expected
    assert not staged_leftovers([tmp_path])
    assert not (tmp_path / JOURNAL_NAME).exists() and not (tmp_path / LOCK_NAME).exists()


@pytest.mark.parametrize("fault", ["rename:1", "rename:2"])
def test_a_real_fix_killed_while_renaming_is_completed_by_the_next_command(tmp_path: Path, fault: str):
    (tmp_path / ".git").mkdir()
    write_tree(tmp_path, job(MOE_FLAGS, extra={"zero2.json": ZERO2}))
    before = _snapshot(tmp_path)
    killed = _trainlint(tmp_path, *FIX_ARGS, fault=fault)
    assert killed.returncode == 137
    _trainlint(tmp_path, "check", ".")
    after = _snapshot(tmp_path)
    changed = {name for name in after if after[name] != before.get(name)}
    assert changed == {"finetune.sh", "zero2.json"}  # both written, never one
    clean = tmp_path.parent / f"{tmp_path.name}-clean"
    (clean / ".git").mkdir(parents=True)
    write_tree(clean, job(MOE_FLAGS, extra={"zero2.json": ZERO2}))
    assert _trainlint(clean, *FIX_ARGS).returncode in (0, 1)
    assert after == _snapshot(clean)  # as an uninterrupted fix leaves it; no journal, lock or staged file


def test_sigterm_during_a_fix_rolls_it_back_and_says_so(tmp_path: Path):
    (tmp_path / ".git").mkdir()
    write_tree(tmp_path, job(MOE_FLAGS, extra={"zero2.json": ZERO2}))
    before = _snapshot(tmp_path)
    script = textwrap.dedent("""
        import os, signal, sys
        from trainlint.fixers import transaction
        from trainlint.cli import main
        renames = []
        real_replace = os.replace
        def replace(source, target):
            real_replace(source, target)
            if str(source).endswith(".trainlint-new"):
                renames.append(target)
                if len(renames) == 1:
                    os.kill(os.getpid(), signal.SIGTERM)  # between the two renames of the round
        transaction.os.replace = replace
        sys.exit(main(sys.argv[1:]))
    """)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", script, *FIX_ARGS], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2
    assert "interrupted by SIGTERM" in done.stderr and "rolled back" in done.stderr
    assert _snapshot(tmp_path) == before


def _session(folder: Path, **options) -> FixSession:
    def again():
        return lint([Path(".")], make_target("a100-40gb"), Selection(("TL101",)), preserve_effective_batch=True)
    return FixSession(again, unsafe=False, preserve=True, **options)


@pytest.fixture
def moe(tmp_path: Path, monkeypatch) -> Path:
    (tmp_path / ".git").mkdir()
    write_tree(tmp_path, job(MOE_FLAGS, extra={"zero2.json": ZERO2}))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_second_fix_on_the_same_tree_waits_then_refuses(moe: Path):
    before = _snapshot(moe)
    with TreeLock(moe):
        started = time.monotonic()
        outcome = _session(moe, lock_wait=0.5).run()
        waited = time.monotonic() - started
    assert outcome.error and "another trainlint fix" in outcome.error and "nothing was written" in outcome.error
    assert waited >= 0.5
    assert _snapshot(moe) == before
    assert _session(moe).run().files_changed == ["finetune.sh", "zero2.json"]  # free again: it runs


def test_a_file_changed_between_read_and_write_abandons_the_whole_fix(moe: Path):
    lint_once = _session(moe).lint

    def lint_then_edit():
        result = lint_once()
        with open(moe / "zero2.json", "a") as handle:  # someone saves the config meanwhile
            handle.write(" ")
        return result

    outcome = FixSession(lint_then_edit, unsafe=False, preserve=True, max_rounds=1).run()
    assert outcome.error and "zero2.json changed since trainlint read it" in outcome.error
    assert b"--per_device_train_batch_size 8" in (moe / "finetune.sh").read_bytes()  # nothing was written
    assert not staged_leftovers([moe])


def test_the_transaction_checks_the_bytes_it_replaces(tmp_path: Path):
    old = _three_files(tmp_path)
    changes = [FileChange(tmp_path / n, data, b"x\n") for n, data in old.items()]
    (tmp_path / "c.yaml").write_bytes(b"edited by hand\n")
    with pytest.raises(FixRefused, match="c.yaml changed since trainlint read it"):
        Transaction(tmp_path, [tmp_path]).apply(changes)
    assert _files(tmp_path) == {**old, "c.yaml": b"edited by hand\n"}
    assert not staged_leftovers([tmp_path]) and not (tmp_path / JOURNAL_NAME).exists()


def test_a_read_only_file_is_refused_with_a_clear_message(moe: Path):
    (moe / "zero2.json").chmod(0o444)
    before = _snapshot(moe)
    outcome = _session(moe).run()
    assert outcome.error and "zero2.json is read-only" in outcome.error
    assert _snapshot(moe) == before
    assert stat.S_IMODE((moe / "zero2.json").stat().st_mode) == 0o444


def test_modes_are_kept_and_a_link_inside_the_tree_stays_a_link(moe: Path):
    (moe / "finetune.sh").chmod(0o750)
    (moe / "configs").mkdir()
    (moe / "zero2.json").rename(moe / "configs" / "zero2.json")
    (moe / "zero2.json").symlink_to(Path("configs") / "zero2.json")
    outcome = _session(moe).run()
    assert outcome.error is None and outcome.files_changed
    assert stat.S_IMODE((moe / "finetune.sh").stat().st_mode) == 0o750
    assert (moe / "zero2.json").is_symlink()
    assert b'"train_micro_batch_size_per_gpu": "auto"' in (moe / "configs" / "zero2.json").read_bytes()


def test_a_link_out_of_the_tree_is_never_written_through(tmp_path: Path, monkeypatch):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    outside = tmp_path / "elsewhere.json"
    outside.write_text("old\n")
    (repo / "ds.json").symlink_to(outside)
    with pytest.raises(FixRefused, match="leads outside the scanned tree"):
        Transaction(repo, [repo]).apply([FileChange(repo / "ds.json", b"old\n", b"new\n")])
    assert outside.read_text() == "old\n"


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another user")
def test_the_owner_is_kept_when_running_as_root(moe: Path):
    os.chown(moe / "zero2.json", 4321, 4321)
    assert _session(moe).run().files_changed == ["finetune.sh", "zero2.json"]
    info = (moe / "zero2.json").stat()
    assert (info.st_uid, info.st_gid) == (4321, 4321)


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write any file")
def test_a_file_of_another_user_is_refused(tmp_path: Path):  # pragma: no cover - CI runs as a user
    old = _three_files(tmp_path)
    change = FileChange(Path("/etc/hostname"), Path("/etc/hostname").read_bytes(), b"x")
    with pytest.raises(FixRefused):
        Transaction(Path("/etc"), [Path("/etc")]).apply([change])
    assert _files(tmp_path) == old


def test_recovery_leaves_the_journal_of_a_running_fix_alone(tmp_path: Path):
    _three_files(tmp_path)
    (tmp_path / JOURNAL_NAME).write_text('{"version": 1, "state": "commit", "entries": []}')
    with TreeLock(tmp_path):
        assert recover([tmp_path]) == []
        assert (tmp_path / JOURNAL_NAME).exists()
    assert recover([tmp_path]) and not (tmp_path / JOURNAL_NAME).exists()


@pytest.mark.skipif(not os.environ.get("TRAINLINT_LONG_FAULTS"), reason="long fault run: set TRAINLINT_LONG_FAULTS=N")
def test_long_random_kills_of_a_real_fix(tmp_path: Path):  # pragma: no cover - run by hand
    rounds = int(os.environ["TRAINLINT_LONG_FAULTS"])
    rng = random.Random(rounds)
    for index in range(rounds):
        folder = tmp_path / str(index)
        (folder / ".git").mkdir(parents=True)
        write_tree(folder, job(MOE_FLAGS, extra={"zero2.json": ZERO2}))
        before = _snapshot(folder)
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        process = subprocess.Popen([sys.executable, "-m", "trainlint", *FIX_ARGS], cwd=folder, env=env,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.2, 3.0))
        process.send_signal(rng.choice([signal.SIGKILL, signal.SIGTERM, signal.SIGINT]))
        process.wait(timeout=60)
        _trainlint(folder, "check", ".")
        after = _snapshot(folder)
        changed = {name for name in after if after[name] != before.get(name)}
        assert changed in (set(), {"finetune.sh", "zero2.json"}), (index, changed)
        assert set(after) == set(before), index
        for fault in ("stage:1", "stage:3", "rename:1", "rename:2", "rename:3"):
            three = folder / f"three-{fault.replace(':', '-')}"
            three.mkdir()
            old = _three_files(three)
            _crash_transaction(three, fault)
            recover([three])
            assert _files(three) in (old, _new()) and not staged_leftovers([three])


def test_the_diff_shows_every_round_a_real_fix_applies(tmp_path: Path, monkeypatch):
    (tmp_path / ".git").mkdir()
    write_tree(tmp_path, job("--deepspeed zero2.json\n--model_name_or_path lmsys/vicuna-7b-v1.5\n"
                             "--per_device_train_batch_size 16\n--per_device_eval_batch_size 64",
                             extra={"zero2.json": '{"train_micro_batch_size_per_gpu": 16, '
                                                  '"zero_optimization": {"stage": 2}}\n'}))
    monkeypatch.chdir(tmp_path)

    def again():
        return lint([Path(".")], make_target("a100-40gb"), preserve_effective_batch=True)

    before = _snapshot(tmp_path)
    preview = FixSession(again, unsafe=True, preserve=True).preview()
    assert _snapshot(tmp_path) == before  # nothing written
    assert preview.rounds == 3
    outcome = FixSession(again, unsafe=True, preserve=True).run()
    assert outcome.rounds == 3 and len(outcome.applied) == len(preview.applied)
    after = _snapshot(tmp_path)
    expected = "".join(unified_diff(name, before[name], after[name]) for name in sorted(before)
                       if after[name] != before[name])
    assert preview.diff == expected and preview.files_changed == outcome.files_changed
