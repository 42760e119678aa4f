"""The fact cache: findings identical with and without it, never stale after an edit, a corrupt or
planted entry ignored, nothing executed from it."""
from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest

from trainlint.api import CACHE_DIR_VARIABLE
from trainlint.cache import FactCache, decode, encode
from trainlint.linter import lint, make_target
from trainlint.readers.python import read_python
from trainlint.readers.shell import read_shell

SAMPLES = Path(__file__).parent / "samples"
LAUNCHER = """#!/bin/bash
deepspeed train.py --deepspeed zero2.json --per_device_train_batch_size {batch} --bf16 True \\
    --model_name_or_path meta-llama/Llama-2-7b-hf --gradient_accumulation_steps 1
"""
TRAIN = """from dataclasses import dataclass, field
import transformers

@dataclass
class TrainingArguments(transformers.TrainingArguments):
    model_max_length: int = field(default=2048)

def train():
    parser = transformers.HfArgumentParser((TrainingArguments,))
    (training_args,) = parser.parse_args_into_dataclasses()
    trainer = transformers.Trainer(args=training_args, eval_dataset=None)

if __name__ == "__main__":
    train()
"""


def _summary(result):
    return [(f.code, f.path, f.origin.start_byte if f.origin else None, f.message) for f in result.findings]


def _project(tmp_path: Path, batch: int = 64) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "train.py").write_text(TRAIN)
    zero2 = '{"zero_optimization": {"stage": 2}, "train_micro_batch_size_per_gpu": "auto"}'
    (tmp_path / "zero2.json").write_text(zero2)
    (tmp_path / "run.sh").write_text(LAUNCHER.format(batch=batch))
    return tmp_path


@pytest.mark.parametrize("sample", sorted(p.name for p in SAMPLES.iterdir() if p.is_dir()))
def test_findings_are_the_same_cold_warm_and_uncached(sample, tmp_path, monkeypatch):
    monkeypatch.chdir(SAMPLES.parent)
    target = make_target("a100-40gb")
    plain = _summary(lint([SAMPLES / sample], target, processes=1))
    cold = _summary(lint([SAMPLES / sample], target, processes=1, cache_dir=tmp_path))
    warm = _summary(lint([SAMPLES / sample], target, processes=1, cache_dir=tmp_path))
    kept = _summary(lint([SAMPLES / sample], target, processes=1, cache_dir=tmp_path))  # every kind cached by now
    assert plain == cold == warm == kept


def _entry_kinds(cache: Path) -> list:
    """The reader kinds of the fact entries in `cache`, by the class of the facts each holds."""
    kinds = []
    for entry in sorted(cache.glob("facts-*/*/*.json")):
        facts = decode(json.loads(entry.read_text())["facts"])
        kinds.append(type(facts).__name__)
    return sorted(kinds)


def test_a_scan_without_a_cache_stores_only_what_is_slow_to_read_again(tmp_path, monkeypatch):
    """A first scan (a fresh CI checkout) writes the entries of its Python files only: a launcher's facts cost
    about as much to write as to read. The next scan finds the cache kept and writes the launcher's too."""
    project = _project(tmp_path / "project")
    monkeypatch.chdir(project)
    cache = tmp_path / "cache"
    target = make_target("a100-40gb")
    first = lint([Path(".")], target, processes=1, cache_dir=cache)
    assert _entry_kinds(cache) == ["PythonModule"]
    second = lint([Path(".")], target, processes=1, cache_dir=cache)
    assert _entry_kinds(cache) == ["ConfigFile", "PythonModule", "ShellScript"]
    third = lint([Path(".")], target, processes=1, cache_dir=cache)
    assert _summary(first) == _summary(second) == _summary(third)
    assert first.findings  # a real job with findings, not an empty comparison


def test_a_tree_without_python_has_its_launchers_cached_from_the_second_scan(tmp_path, monkeypatch):
    """The first scan of a tree whose jobs read no Python file writes no entry, yet marks the cache as kept: the
    second scan stores its launchers' and recipes' facts, and the third reads them from the cache."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "run.sh").write_text(LAUNCHER.format(batch=64).replace("train.py", "/opt/site/train.py"))
    (project / "zero2.json").write_text('{"zero_optimization": {"stage": 2}}')
    monkeypatch.chdir(project)
    cache = tmp_path / "cache"
    target = make_target("a100-40gb")
    first = lint([Path(".")], target, processes=1, cache_dir=cache)
    assert _entry_kinds(cache) == []
    second = lint([Path(".")], target, processes=1, cache_dir=cache)
    assert _entry_kinds(cache) == ["ConfigFile", "ShellScript"]
    third = lint([Path(".")], target, processes=1, cache_dir=cache)
    assert _summary(first) == _summary(second) == _summary(third)
    assert [run.id for run in third.scan.runs] == ["run.sh:2"]


def test_an_edit_is_read_again_not_taken_from_the_cache(tmp_path, monkeypatch):
    project = _project(tmp_path / "project")
    monkeypatch.chdir(project)
    cache = tmp_path / "cache"
    before = lint([Path(".")], make_target("a100-40gb"), processes=1, cache_dir=cache)
    (project / "run.sh").write_text(LAUNCHER.format(batch=1))
    after = lint([Path(".")], make_target("a100-40gb"), processes=1, cache_dir=cache)
    fresh = lint([Path(".")], make_target("a100-40gb"), processes=1)
    assert _summary(after) == _summary(fresh) != _summary(before)
    assert (cache / ".gitignore").read_text().strip().endswith("*")
    assert (cache / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")


def test_a_corrupt_entry_is_ignored_and_written_again(tmp_path, monkeypatch):
    project = _project(tmp_path / "project")
    monkeypatch.chdir(project)
    cache = FactCache(tmp_path / "cache")
    expected = cache.read("python", Path("train.py"), read_python)
    entries = list((tmp_path / "cache").rglob("*.json"))
    assert len(entries) == 1
    key = json.loads(entries[0].read_text())["key"]
    entries[0].write_text(json.dumps({"format": 2, "key": key, "facts": {"nodes": [["system", "id"]], "root": [0]}}))
    assert FactCache(tmp_path / "cache").read("python", Path("train.py"), read_python) == expected
    facts = json.loads(entries[0].read_text())["facts"]
    assert facts["nodes"][facts["root"][0]][0] == "PythonModule"


def test_a_planted_entry_cannot_name_a_class_outside_the_facts():
    with pytest.raises(ValueError):
        decode({"nodes": [["Popen", "touch /tmp/pwned"]], "root": [0]})


def test_a_planted_entry_cannot_refer_to_a_later_node_or_hold_an_object():
    with pytest.raises(IndexError):
        decode({"nodes": [["t", [1]], ["t"]], "root": [0]})
    with pytest.raises(ValueError):
        decode({"nodes": [["Unknown", {"c": "Popen"}]], "root": [0]})


def test_repeated_facts_are_written_once_but_never_share_a_mutable_value():
    from trainlint.core import Origin, Setting, SourceKind

    origin = Origin("run.sh", 1, 1, 1, 5, 0, 4)
    batch = Setting(16, SourceKind.SHELL_VARIABLE, origin, "16")
    facts = ([Setting(16, SourceKind.LAUNCHER_FLAG, origin, "$B", via=(batch,)) for _ in range(3)], {"a": 1}, {"a": 1})
    data = encode(facts)
    assert sum(node[0] == "Origin" for node in data["nodes"]) == 1
    decoded = decode(json.loads(json.dumps(data)))
    assert decoded == facts and decoded[1] is not decoded[2]
    # Equal in Python, told apart in the file: written as distinct nodes, never one shared for all.
    alike = tuple(Setting(value, SourceKind.LAUNCHER_FLAG, origin) for value in (True, 1, 1.0, -0.0, 0.0))
    back = decode(json.loads(json.dumps(encode(alike))))
    assert [type(s.value) for s in back] == [bool, int, float, float, float]
    assert [math.copysign(1, s.value) for s in back[3:]] == [-1, 1]


def test_a_symbolic_link_in_the_cache_is_not_written_through(tmp_path, monkeypatch):
    project = _project(tmp_path / "project")
    monkeypatch.chdir(project)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    cache = FactCache(tmp_path / "cache")
    cache.read("shell", Path("run.sh"), read_shell)
    entry = next((tmp_path / "cache").rglob("*.json"))
    entry.unlink()
    os.symlink(victim, entry)
    assert cache.read("shell", Path("run.sh"), read_shell) == read_shell(Path("run.sh"))
    assert victim.read_text() == "keep me"


def test_facts_round_trip_exactly(monkeypatch):
    monkeypatch.chdir(SAMPLES.parent)
    for path in sorted(SAMPLES.rglob("*.py"))[:40] + sorted(SAMPLES.rglob("*.sh"))[:40]:
        facts = read_python(path) if path.suffix == ".py" else read_shell(path)
        assert decode(json.loads(json.dumps(encode(facts)))) == facts, path


def test_the_command_line_keeps_its_cache_where_it_is_told(tmp_path, cli, monkeypatch):
    monkeypatch.delenv(CACHE_DIR_VARIABLE)
    project = _project(tmp_path / "project")
    cli.run(project, "check", ".", "--cache-dir", str(tmp_path / "elsewhere"))
    assert (tmp_path / "elsewhere" / "CACHEDIR.TAG").is_file()
    assert not (project / ".trainlint_cache").exists()
    cli.run(project, "check", ".", "--no-cache")
    assert not (project / ".trainlint_cache").exists()
    cli.run(project, "check", ".")
    assert (project / ".trainlint_cache" / ".gitignore").is_file()


def test_the_cache_variable_moves_the_default_cache_and_the_option_still_wins(tmp_path, cli, monkeypatch):
    project = _project(tmp_path / "project")
    monkeypatch.setenv(CACHE_DIR_VARIABLE, str(tmp_path / "from-environment"))
    cli.run(project, "check", ".")
    assert (tmp_path / "from-environment" / "CACHEDIR.TAG").is_file()
    assert not (project / ".trainlint_cache").exists()
    cli.run(project, "check", ".", "--cache-dir", str(tmp_path / "from-option"))
    assert (tmp_path / "from-option" / "CACHEDIR.TAG").is_file()


def test_a_cache_folder_that_cannot_be_looked_into_costs_only_time(tmp_path, monkeypatch):
    """A cache below a folder the user may not read (the entries' folder cannot even be tested) leaves the scan as
    it is without a cache."""
    project = _project(tmp_path / "project")
    monkeypatch.chdir(project)
    target = make_target("a100-40gb")
    plain = _summary(lint([Path(".")], target, processes=1))
    real_is_dir = Path.is_dir

    def refusing(self):
        if "facts-" in self.name:
            raise PermissionError(13, "Permission denied", str(self))
        return real_is_dir(self)

    monkeypatch.setattr(Path, "is_dir", refusing)
    assert _summary(lint([Path(".")], target, processes=1, cache_dir=tmp_path / "locked" / "cache")) == plain
