"""A fix round may create a file (a DeepSpeed config of a job's own) and, undoing such a round, remove it: all or
nothing with the files it edits, across a crash at any step, and never over a file that appeared meanwhile."""
from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import write_tree
from trainlint.fixers.journal import JOURNAL_NAME, JournalEntry, commit_entry, recover
from trainlint.fixers.transaction import FileChange, FixRefused, Transaction, staged_leftovers

ROOT = Path(__file__).resolve().parents[1]
CREATE_SCRIPT = textwrap.dedent("""
    import sys
    from pathlib import Path
    from trainlint.fixers.transaction import FileChange, Transaction
    root = Path(sys.argv[1])
    changes = [FileChange(root / "finetune.sh", (root / "finetune.sh").read_bytes(), b"new launcher\\n"),
               FileChange(root / "scripts" / "zero3_finetune.json", None, b"{}\\n")]
    if sys.argv[2] == "remove":
        changes = [FileChange(root / "finetune.sh", b"new launcher\\n", b"old launcher\\n"),
                   FileChange(root / "scripts" / "zero3_finetune.json", b"{}\\n", None)]
    Transaction(root, [root]).apply(changes)
""")


def _tree(root: Path) -> None:
    (root / ".git").mkdir(parents=True, exist_ok=True)
    write_tree(root, {"finetune.sh": "old launcher\n", "scripts/zero3.json": "{}\n"})


def _state(root: Path):
    created = root / "scripts" / "zero3_finetune.json"
    return (root / "finetune.sh").read_bytes(), created.read_bytes() if created.exists() else None


def _run(root: Path, mode: str, fault: str = "") -> int:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("TRAINLINT_FAULT_AT", None)
    if fault:
        env["TRAINLINT_FAULT_AT"] = fault
    return subprocess.run([sys.executable, "-c", CREATE_SCRIPT, str(root), mode], env=env, timeout=60).returncode


def test_a_round_creates_a_file_beside_the_ones_it_edits(tmp_path: Path):
    _tree(tmp_path)
    assert _run(tmp_path, "create") == 0
    assert _state(tmp_path) == (b"new launcher\n", b"{}\n")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE((tmp_path / "scripts" / "zero3_finetune.json").stat().st_mode) == 0o666 & ~umask
    assert not staged_leftovers([tmp_path]) and not (tmp_path / JOURNAL_NAME).exists()
    # Undoing the round removes the file it created.
    assert _run(tmp_path, "remove") == 0
    assert _state(tmp_path) == (b"old launcher\n", None)
    assert not staged_leftovers([tmp_path])


@pytest.mark.parametrize("fault", ["stage:1", "stage:2", "rename:1", "rename:2"])
def test_a_crash_while_creating_leaves_all_old_or_all_new(tmp_path: Path, fault: str):
    _tree(tmp_path)
    assert _run(tmp_path, "create", fault) == 137
    assert (tmp_path / JOURNAL_NAME).exists()
    recover([tmp_path])
    expected = (b"old launcher\n", None) if fault.startswith("stage") else (b"new launcher\n", b"{}\n")
    assert _state(tmp_path) == expected
    assert not staged_leftovers([tmp_path]) and not (tmp_path / JOURNAL_NAME).exists()


@pytest.mark.parametrize("fault", ["stage:2", "rename:1", "rename:2"])
def test_a_crash_while_undoing_a_creation_leaves_all_old_or_all_new(tmp_path: Path, fault: str):
    _tree(tmp_path)
    assert _run(tmp_path, "create") == 0
    assert _run(tmp_path, "remove", fault) == 137
    recover([tmp_path])
    expected = (b"new launcher\n", b"{}\n") if fault.startswith("stage") else (b"old launcher\n", None)
    assert _state(tmp_path) == expected
    assert not staged_leftovers([tmp_path])


def test_a_file_that_is_already_there_is_never_written_over(tmp_path: Path):
    _tree(tmp_path)
    write_tree(tmp_path, {"scripts/zero3_finetune.json": "someone's own\n"})
    with pytest.raises(FixRefused, match="zero3_finetune.json already exists"):
        Transaction(tmp_path, [tmp_path]).apply(
            [FileChange(tmp_path / "finetune.sh", b"old launcher\n", b"new launcher\n"),
             FileChange(tmp_path / "scripts" / "zero3_finetune.json", None, b"{}\n")])
    assert _state(tmp_path) == (b"old launcher\n", b"someone's own\n")
    assert not staged_leftovers([tmp_path]) and not (tmp_path / JOURNAL_NAME).exists()


def test_a_file_that_appears_before_the_link_stays_and_the_staged_one_goes(tmp_path: Path):
    staged, target = tmp_path / ".new.trainlint-new", tmp_path / "zero3_finetune.json"
    staged.write_bytes(b"ours\n")
    target.write_bytes(b"theirs\n")
    entry = JournalEntry(str(target), str(staged), "")
    with pytest.raises(FileExistsError):
        commit_entry(entry)
    assert target.read_bytes() == b"theirs\n"
    # Recovery of that entry, either way, leaves their file alone.
    (tmp_path / JOURNAL_NAME).write_text(
        '{"version": 1, "state": "rollback", "entries": [{"target": "%s", "new": "%s", "old": ""}]}'
        % (target, staged))
    recover([tmp_path])
    assert target.read_bytes() == b"theirs\n" and not staged.exists()


def test_a_file_created_outside_the_tree_is_refused(tmp_path: Path):
    repo = tmp_path / "repo"
    _tree(repo)
    (repo / "elsewhere").symlink_to(tmp_path)
    with pytest.raises(FixRefused, match="leads outside the scanned tree"):
        Transaction(repo, [repo]).apply([FileChange(repo / "elsewhere" / "new.json", None, b"{}\n")])
    assert not (tmp_path / "new.json").exists()


def test_files_held_in_memory_are_never_read_ahead_by_worker_processes(tmp_path: Path, monkeypatch):
    # `fix --diff` lints its rounds through an overlay; a worker started by another method than fork (spawn on macOS,
    # forkserver) would read the disk instead, and a file the preview created would not be there at all.
    import trainlint.linter as linter
    from trainlint.readers.source import reading_overlay

    _tree(tmp_path)
    read_ahead = []
    monkeypatch.setattr(linter, "prefetch", lambda *args, **kwargs: read_ahead.append(args))
    target = linter.make_target(gpu="a100-40gb", num_gpus=8)
    with reading_overlay({tmp_path / "scripts" / "zero3_finetune.json": b"{}\n"}):
        linter.lint([tmp_path], target, processes=2)
    assert read_ahead == []
    linter.lint([tmp_path], target, processes=2)
    assert len(read_ahead) == 1
