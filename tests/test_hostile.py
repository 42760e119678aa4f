"""A tree from a stranger cannot make a scan hang, read without end, crash, or read (and show) files
outside it. Each test builds its hostile tree in a temp folder and runs in a few seconds."""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.conftest import write_tree
from trainlint.checks._examples import job
from trainlint.linter import lint, make_target
from trainlint.readers import yaml as yaml_reader
from trainlint.readers.yaml import MAX_DEPTH
from trainlint.resolution.workspace import ReadBounds, Workspace

SECRET = "TOP-SECRET-TOKEN-1234"


def _lint(root: Path, *paths: Path, **workspace):
    return lint(list(paths) or [root], make_target("a100-40gb", num_gpus=8),
                workspace=Workspace(root, **workspace))


def _texts(result) -> str:
    return "\n".join(f"{f.code} {f.path} {f.message}" for f in result.findings)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A file beside the scanned tree holding a secret, as /etc/passwd or ~/.netrc would."""
    secret = tmp_path / "outside" / "secret.json"
    secret.parent.mkdir()
    secret.write_text('{"train_micro_batch_size_per_gpu": 4, "token": "%s", "zero_optimization": '
                      '{"stage": 3}}\n' % SECRET)
    return secret


@pytest.fixture
def tree(tmp_path: Path, monkeypatch) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "config").write_text(f'[remote "origin"]\n  url = https://x:{SECRET}@example.com\n')
    monkeypatch.chdir(root)
    return root


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_hostile_tree_is_scanned_quickly_and_every_skipped_file_is_named(tree: Path, outside: Path):
    write_tree(tree, job("--per_device_train_batch_size 4\n--deepspeed ds.json"))
    (tree / "ds.json").symlink_to(outside)  # a link out of the tree
    os.mkfifo(tree / "train.sh")
    os.mkfifo(tree / "recipe.yaml")
    (tree / "zero.sh").symlink_to("/dev/zero")
    (tree / "random.yaml").symlink_to("/dev/urandom")
    (tree / "loop.sh").symlink_to(tree / "loop2.sh")
    (tree / "loop2.sh").symlink_to(tree / "loop.sh")
    (tree / "big.sh").write_bytes(b"# padding\n" * 120_000)  # 1.2 MB, over the bound below
    (tree / "absolute.sh").write_text(f"deepspeed train.py --per_device_train_batch_size 2 --deepspeed {outside}\n")
    started = time.monotonic()
    result = _lint(tree, bounds=ReadBounds(file_bytes=1_000_000))
    elapsed = time.monotonic() - started
    assert elapsed < 30
    text = _texts(result)
    for name in ("train.sh", "recipe.yaml", "zero.sh", "random.yaml", "loop.sh", "loop2.sh", "big.sh"):
        assert any(f.code == "TL002" and f.path == name for f in result.findings), (name, text)
    assert "named pipe" in text and "character device" in text and "link loop" in text and "1200000 bytes" in text
    # Both jobs name the secret file; neither read it, and it is reported, not "missing".
    assert text.count("is outside the scanned tree") >= 1 and "TL302" not in text
    assert SECRET not in text
    runs = {run.path: run for run in result.scan.runs}
    for launcher in ("finetune.sh", "absolute.sh"):
        stage = runs[launcher].setting("zero_stage")
        assert stage is not None and type(stage.value).__name__ == "Unknown", (launcher, stage)


def test_a_relative_path_out_of_the_tree_and_git_metadata_are_not_read(tree: Path, outside: Path):
    files = job("--per_device_train_batch_size 4\n--deepspeed ../outside/secret.json")
    files["git.sh"] = "deepspeed train.py --per_device_train_batch_size 4 --deepspeed .git/config\n"
    write_tree(tree, files)
    result = _lint(tree)
    text = _texts(result)
    assert SECRET not in text
    assert "secret.json is outside the scanned tree" in text and ".git/config is outside the scanned tree" in text
    assert "TL302" not in text


def test_outside_reads_are_allowed_when_asked(tree: Path, outside: Path):
    write_tree(tree, job(f"--per_device_train_batch_size 4\n--deepspeed {outside}"))
    [run] = _lint(tree, allow_outside_reads=True).scan.runs
    assert run.setting("zero_stage").value == 3


def test_a_home_path_is_unknown_not_missing(tree: Path, monkeypatch, tmp_path: Path):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    write_tree(tree, job("--per_device_train_batch_size 4\n--deepspeed ~/ds_config.json"))
    result = _lint(tree)
    assert "TL302" not in _texts(result)
    [run] = result.scan.runs
    assert type(run.setting("zero_stage").value).__name__ == "Unknown"


def test_a_relative_path_inside_the_tree_that_is_gone_is_still_missing(tree: Path):
    write_tree(tree, job("--per_device_train_batch_size 4\n--deepspeed configs/gone.json"))
    assert any(f.code == "TL302" and "gone.json" in f.message for f in _lint(tree).findings)


def test_a_scan_byte_budget_names_what_it_skipped(tree: Path):
    for index in range(5):
        (tree / f"run{index}.sh").write_text("echo hello\n" * 100)  # 1100 bytes each
    result = _lint(tree, bounds=ReadBounds(scan_bytes=3000))
    skipped = [f.path for f in result.findings if f.code == "TL002" and "per scan" in f.message]
    assert skipped == ["run2.sh", "run3.sh", "run4.sh"]


def test_a_yaml_recipe_past_the_caps_is_reported_not_silent(tree: Path, monkeypatch):
    monkeypatch.setattr(yaml_reader, "MAX_VALUES", 50)  # the real cap takes a parse of seconds to reach
    deep = "gradient_accumulation_steps: " + "[" * (MAX_DEPTH + 20) + "]" * (MAX_DEPTH + 20) + "\n"
    (tree / "deep.yaml").write_text(deep)
    (tree / "lock.yaml").write_text("a: " + "[" * (MAX_DEPTH + 20) + "]" * (MAX_DEPTH + 20) + "\n")
    many = "per_device_train_batch_size: 4\n" + "".join(f"k{i}: {i}\n" for i in range(yaml_reader.MAX_VALUES + 5))
    (tree / "recipe.yaml").write_text(many)
    result = _lint(tree)
    reported = {f.path for f in result.findings if f.code == "TL002" and "not read to the end" in f.message}
    assert reported == {"deep.yaml", "recipe.yaml"}  # lock.yaml holds no recipe key: never parsed


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_documents_beside_a_recipe_are_read_only_inside_the_tree(tree: Path, tmp_path: Path):
    """The Markdown documents a lone recipe's job may come from: a link out of the tree is not read (its commands
    would name files there), a FIFO is not opened, and neither makes the scan report or show anything."""
    outside = tmp_path / "outside.md"
    outside.write_text(f"```bash\naccelerate launch train.py recipe.yaml --run_name {SECRET}\n```\n")
    write_tree(tree, {"recipe.yaml": "model_name_or_path: meta-llama/Llama-2-7b-hf\nper_device_train_batch_size: 4\n"
                                     "output_dir: out\n", "train.py": "import transformers\n"})
    (tree / "README.md").symlink_to(outside)
    os.mkfifo(tree / "NOTES.md")
    started = time.monotonic()
    result = _lint(tree)
    assert time.monotonic() - started < 30
    assert [run.path for run in result.scan.runs] == ["recipe.yaml"]  # still checked by itself
    assert SECRET not in _texts(result) and not any("README" in f.path or "NOTES" in f.path for f in result.findings)
