"""The result cache: a warm check writes byte for byte what a scan would, in every format, without
scanning; any change of what the scan read or looked for, of the options or of the environment it
consults makes it scan again; a corrupt entry is ignored and written again."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from trainlint import commands
from trainlint.api import CACHE_DIR_VARIABLE
from trainlint.checks._examples import TRAIN_PY, ZERO2

LAUNCHER = """#!/bin/bash
deepspeed --num_gpus 8 {entry} --deepspeed zero2.json --model_name_or_path {model} \\
    --bf16 True --per_device_train_batch_size 64 --gradient_accumulation_steps 1 --model_max_length 2048
"""
FORMATS = (("--output-format", "full"), ("--output-format", "concise"), ("--output-format", "json"),
           ("--output-format", "github"), ("--output-format", "sarif"), ("--statistics",))


@pytest.fixture(autouse=True)
def cache_in_the_project(monkeypatch):
    """These tests are about the cache beside the project: the test run's variable would move it."""
    monkeypatch.delenv(CACHE_DIR_VARIABLE, raising=False)


class Scans:
    """Counts the scans the command line runs (a check answered from the cache runs none)."""

    def __init__(self, monkeypatch):
        self.count = 0
        real = commands._scan

        def counted(*args, **kwargs):
            self.count += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(commands, "_scan", counted)


@pytest.fixture
def scans(monkeypatch) -> Scans:
    return Scans(monkeypatch)


def _project(root: Path, entry: str = "train.py", model: str = "lmsys/vicuna-7b-v1.5") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / ".git").mkdir()
    (root / "train.py").write_text(TRAIN_PY.replace("{eval_dataset}", "None"))
    (root / "zero2.json").write_text(ZERO2)
    (root / "scripts").mkdir()
    (root / "scripts" / "finetune.sh").write_text(LAUNCHER.format(entry=entry, model=model))
    return root


def _entries(project: Path):
    return sorted((project / ".trainlint_cache").glob("results-*/*/*.json"))


@pytest.mark.parametrize("output", FORMATS, ids=lambda option: option[-1].lstrip("-"))
def test_a_warm_check_writes_what_a_scan_writes(output, tmp_path, cli, scans):
    project = _project(tmp_path / "project")
    uncached = cli.run(project, "check", *output, "--no-cache")
    cold = cli.run(project, "check", *output)
    assert scans.count == 2
    warm = cli.run(project, "check", *output)
    assert scans.count == 2  # answered from the cache
    assert warm == cold == uncached
    assert uncached[0] == 1 and uncached[1]  # a real report, with findings


def test_the_summary_and_exit_zero_come_back_too(tmp_path, cli, scans):
    project = _project(tmp_path / "project")
    argv = ("check", "--output-format", "github", "--summary-file", str(tmp_path / "summary.md"), "--exit-zero")
    cold = cli.run(project, *argv)
    first = (tmp_path / "summary.md").read_text()
    (tmp_path / "summary.md").unlink()
    warm = cli.run(project, *argv)
    assert scans.count == 1
    assert warm == cold and warm[0] == 0
    assert (tmp_path / "summary.md").read_text() == first and "trainlint" in first


def test_editing_a_file_the_scan_read_is_scanned_again(tmp_path, cli, scans):
    project = _project(tmp_path / "project")
    before = cli.check_json(project, "check")
    (project / "zero2.json").write_text(ZERO2.replace('"stage": 2', '"stage": 3'))
    after = cli.check_json(project)
    assert scans.count == 2
    assert after == cli.check_json(project, "--no-cache") != before


def test_creating_the_missing_entry_script_is_scanned_again(tmp_path, cli, scans):
    project = _project(tmp_path / "project", entry="train_mem.py")
    missing = cli.codes(project)
    assert "TL302" in missing
    cli.codes(project)
    assert scans.count == 1
    (project / "train_mem.py").write_text(TRAIN_PY.replace("{eval_dataset}", "None"))
    found = cli.codes(project)
    assert scans.count == 2
    assert "TL302" not in found and found == cli.codes(project, "--no-cache")


def test_a_new_launcher_anywhere_in_the_tree_is_scanned_again(tmp_path, cli, scans):
    project = _project(tmp_path / "project")
    one = cli.check_json(project)[1]
    (project / "scripts" / "pretrain.sh").write_text(LAUNCHER.format(entry="train.py", model="lmsys/vicuna-13b-v1.5"))
    two = cli.check_json(project)[1]
    assert scans.count == 2 and len(two["runs"]) == len(one["runs"]) + 1


def test_options_and_configuration_are_part_of_the_key(tmp_path, cli, scans):
    project = _project(tmp_path / "project")
    default = cli.check_json(project)
    small = cli.check_json(project, "--gpu", "a100-40gb")
    assert scans.count == 2 and small != default
    (project / "trainlint.toml").write_text('gpu = "a100-40gb"\nignore = ["TL101"]\n')
    configured = cli.codes(project)
    assert scans.count == 3 and "TL101" not in configured
    (project / "trainlint.toml").write_text('gpu = "a100-40gb"\n')
    assert "TL101" in cli.codes(project)
    assert scans.count == 4


def test_the_hugging_face_cache_is_an_input(tmp_path, cli, scans, monkeypatch):
    """The model's config.json in the local Hugging Face cache is read: its appearance, and a change of
    HF_HOME (where the cache is), make the check scan again."""
    project = _project(tmp_path / "project", model="example-org/tiny-chat")
    hub = tmp_path / "hf"
    monkeypatch.setenv("HF_HOME", str(hub))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    unknown = cli.check_json(project)[1]
    cli.check_json(project)
    assert scans.count == 1
    snapshot = hub / "hub" / "models--example-org--tiny-chat" / "snapshots" / "0123abc"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text(json.dumps({
        "model_type": "llama", "hidden_size": 8192, "num_hidden_layers": 80, "num_attention_heads": 64,
        "num_key_value_heads": 8, "intermediate_size": 28672, "vocab_size": 32000}))
    known = cli.check_json(project)[1]
    assert scans.count == 2 and known != unknown
    monkeypatch.setenv("HF_HOME", str(tmp_path / "elsewhere"))
    assert cli.check_json(project)[1] == unknown
    assert scans.count == 3


def test_a_corrupt_entry_is_ignored_and_written_again(tmp_path, cli, scans):
    project = _project(tmp_path / "project")
    cold = cli.run(project, "check")
    [entry] = _entries(project)
    text = entry.read_text()
    entry.write_text(text[: len(text) // 2])  # truncated
    assert cli.run(project, "check") == cold
    assert scans.count == 2
    assert json.loads(entry.read_text())["format"] == 1
    entry.write_text(json.dumps({**json.loads(text), "output": {"text": 3}}))
    assert cli.run(project, "check") == cold
    assert scans.count == 3


def test_no_cache_and_changed_file_modes_leave_no_result(tmp_path, cli, scans):
    project = _project(tmp_path / "project")
    cli.run(project, "check", "--no-cache")
    assert not (project / ".trainlint_cache").exists()
    cli.run(project, "check", "--changed", "scripts/finetune.sh")
    assert _entries(project) == []
    cli.run(project, "check", "--cache-dir", str(tmp_path / "elsewhere"))
    assert len(list((tmp_path / "elsewhere").glob("results-*/*/*.json"))) == 1


def test_the_code_stamp_changes_with_any_edit_of_the_package(tmp_path):
    """The result cache's key names trainlint's code by each file's name, size and modification time: an edited,
    added or removed module is another key; compiled bytecode and other files are not part of it."""
    import os

    from trainlint.cache import code_stamp

    package = tmp_path / "trainlint"
    (package / "checks").mkdir(parents=True)
    (package / "core.py").write_text("VALUE = 1\n")
    (package / "checks" / "rule.py").write_text("CODE = 'TL101'\n")
    (package / "data.csv").write_text("a,b\n")
    suffixes = (".py", ".csv")
    before = code_stamp(package, suffixes)
    assert code_stamp(package, suffixes) == before

    (package / "__pycache__").mkdir()
    (package / "__pycache__" / "core.cpython-311.pyc").write_bytes(b"\0" * 16)
    (package / "notes.txt").write_text("not code\n")
    assert code_stamp(package, suffixes) == before

    rule = package / "checks" / "rule.py"
    info = rule.stat()
    rule.write_text("CODE = 'TL102'\n")  # the same size: told apart by its time
    os.utime(rule, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000))
    edited = code_stamp(package, suffixes)
    assert edited != before
    (package / "checks" / "other.py").write_text("")
    assert code_stamp(package, suffixes) not in (before, edited)
