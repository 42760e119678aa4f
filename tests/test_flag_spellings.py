"""Flags the entry point's parser takes under another spelling: argparse's unique prefix of a long option (unless
the parser is built with `allow_abbrev=False`) and python-fire's `--noname`. Resolution reads the option each
names, so the values reach their knobs, and TL305 reports only what the parser refuses."""
from __future__ import annotations

import shutil
from pathlib import Path

from trainlint.core import SourceKind
from trainlint.knobs import K
from trainlint.linter import lint, make_target

SAMPLES = Path(__file__).parent / "samples" / "flag_spellings"


def _scan(monkeypatch):
    monkeypatch.chdir(SAMPLES)
    result = lint([Path(".")], make_target(gpu="a100-80gb"))
    runs = {Path(run.id.split(":")[0]).name: run for run in result.scan.runs}
    return runs, result.findings


def test_a_unique_prefix_sets_the_option_it_names(monkeypatch):
    runs, _ = _scan(monkeypatch)
    run = runs["finetune.sh"]
    batch = run.setting(K.PER_DEVICE_TRAIN_BATCH_SIZE)
    assert batch.value == 64 and batch.kind is SourceKind.LAUNCHER_FLAG
    assert (batch.origin.path, batch.origin.line) == ("finetune.sh", 7)
    assert run.value(K.GRADIENT_ACCUMULATION_STEPS) == 2
    assert run.value(K.MAX_SEQ_LENGTH) == 1024  # a field of the script's own dataclass
    assert dict(run.facts.flag_spellings) == {"per_device_train": "per_device_train_batch_size",
                                              "gradient_accumulation": "gradient_accumulation_steps",
                                              "model_max": "model_max_length"}


def test_prefixes_the_parser_takes_are_not_reported_and_the_batch_they_set_is_checked(monkeypatch):
    _, findings = _scan(monkeypatch)
    assert [(f.code, f.path, f.origin.line) for f in findings if f.path == "finetune.sh"] == [
        ("TL101", "finetune.sh", 7)]


def test_a_parser_built_with_allow_abbrev_false_takes_no_prefix(monkeypatch):
    runs, findings = _scan(monkeypatch)
    refused = [f for f in findings if f.path == "pretrain.sh"]
    assert [(f.code, f.origin.line, f.origin.column) for f in refused] == [("TL305", 3, 41)]
    # the message says which option the prefix would have named, as the script spells it
    assert "(it would abbreviate `--micro-batch-size`, but the parser is built with allow_abbrev=False)" \
        in refused[0].message
    assert runs["pretrain.sh"].facts.flag_spellings == ()


def test_the_fix_edits_the_value_written_after_the_prefix(cli, tmp_path):
    shutil.copytree(SAMPLES, tmp_path / "repo")
    launcher = tmp_path / "repo" / "finetune.sh"
    code, out, err = cli.run(tmp_path / "repo", "fix", "finetune.sh", "--gpu", "a100-80gb")
    assert code in (0, 1), err
    lines = launcher.read_text().splitlines()
    assert lines[6:8] == ["    --per_device_train 32 \\", "    --gradient_accumulation 4 \\"]


def test_a_prefix_and_its_option_both_written_take_the_later_value(tmp_path, monkeypatch):
    shutil.copytree(SAMPLES, tmp_path / "repo")
    launcher = tmp_path / "repo" / "finetune.sh"
    text = launcher.read_text()
    launcher.write_text(text.replace("    --per_device_train 64 \\\n",
                                     "    --per_device_train_batch_size 4 \\\n    --per_device_train 64 \\\n"))
    (tmp_path / "repo" / "early.sh").write_text(text.replace("    --per_device_train 64 \\\n",
                                                             "    --per_device_train 64 \\\n"
                                                             "    --per_device_train_batch_size 4 \\\n"))
    monkeypatch.chdir(tmp_path / "repo")
    result = lint([Path(".")], make_target(gpu="a100-80gb"))
    runs = {Path(run.id.split(":")[0]).name: run for run in result.scan.runs}
    assert runs["finetune.sh"].value(K.PER_DEVICE_TRAIN_BATCH_SIZE) == 64
    assert runs["early.sh"].value(K.PER_DEVICE_TRAIN_BATCH_SIZE) == 4
    # argparse takes both spellings: neither is an unknown flag
    assert not [f for f in result.findings if f.code == "TL305" and f.path in ("finetune.sh", "early.sh")]
