"""Scripts that bound the prompt and the response apart (`max_source_length`, `max_target_length`) and give no
length of their own: a decoder-only model trains on the two concatenated, so a row holds up to their sum."""
from __future__ import annotations

import shutil
from pathlib import Path

from trainlint.core import Launcher, Setting, SourceKind, Unknown
from trainlint.knobs import K
from trainlint.linter import lint, make_target
from trainlint.resolution.frameworks.base import DeriveContext, Stage
from trainlint.resolution.frameworks.hf_trainer import HF_TRAINER
from trainlint.resolution.precedence import Candidates

SAMPLES = Path(__file__).parent / "samples" / "seq2seq_lengths"


def _scan(monkeypatch, gpu="a100-80gb"):
    monkeypatch.chdir(SAMPLES)
    result = lint([Path(".")], make_target(gpu=gpu))
    runs = {Path(run.id.split(":")[0]).name: run for run in result.scan.runs}
    estimates = {Path(run_id.split(":")[0]).name: estimate for run_id, estimate in result.estimates.items()}
    return runs, estimates, result


def test_the_row_length_is_the_sum_of_the_flags_with_both_places(monkeypatch):
    runs, estimates, _ = _scan(monkeypatch)
    length = runs["train_short.sh"].setting(K.MAX_SEQ_LENGTH)
    assert length.value == 128 and length.kind is SourceKind.DERIVED
    assert [(part.origin.path, part.origin.line, part.value) for part in length.via] == [
        ("train_short.sh", 11, 64), ("train_short.sh", 12, 64)]
    assert not any("sequence length" in note for note in estimates["train_short.sh"].unknowns)


def test_the_scripts_own_limits_apply_when_the_launch_passes_none(monkeypatch):
    runs, _, _ = _scan(monkeypatch)
    length = runs["train_defaults.sh"].setting(K.MAX_SEQ_LENGTH)
    assert length.value == 1024 + 128
    assert {part.kind for part in length.via} == {SourceKind.DATACLASS_DEFAULT}
    assert {part.origin.path for part in length.via} == {"main.py"}


def test_a_limit_from_the_caller_leaves_the_length_unknown(monkeypatch):
    runs, estimates, _ = _scan(monkeypatch)
    assert isinstance(runs["train_unknown.sh"].value(K.MAX_SEQ_LENGTH), Unknown)
    assert any("sequence length unknown" in note for note in estimates["train_unknown.sh"].unknowns)


def _derived(**written: Setting):
    candidates = Candidates()
    for name, setting in written.items():
        candidates.add(name, setting)
    HF_TRAINER.derive(Stage.SEQUENCE, candidates, DeriveContext(Launcher.TORCHRUN))
    return candidates.winner(K.MAX_SEQ_LENGTH)


def test_a_length_the_script_gives_itself_wins_and_one_limit_alone_derives_nothing():
    flag = Setting(512, SourceKind.LAUNCHER_FLAG, None)
    source, target = Setting(64, SourceKind.LAUNCHER_FLAG, None), Setting(64, SourceKind.LAUNCHER_FLAG, None)
    assert _derived(max_seq_length=flag, max_source_length=source, max_target_length=target) == flag
    assert _derived(max_source_length=source) is None
    assert _derived(max_source_length=source, max_target_length=target).value == 128


def test_a_fix_never_adds_a_flag_the_script_may_not_take(cli, tmp_path):
    # The parser adds Seq2SeqTrainingArguments' fields, not all known to trainlint. LoRA's switch is no
    # TrainingArguments field and none of the script's own: `--lora_enable` would stop the launch, as
    # HfArgumentParser rejects a flag no dataclass takes.
    shutil.copytree(SAMPLES, tmp_path / "repo")
    launcher = tmp_path / "repo" / "train_unknown.sh"
    before = launcher.read_text()
    code, out, err = cli.run(tmp_path / "repo", "fix", "train_unknown.sh", "--gpu", "a100-40gb", "--unsafe-fixes")
    assert code == 1, err
    assert launcher.read_text() == before
    assert "none it defines itself sets `lora`" in out + err


def test_a_trainingarguments_field_is_still_written_when_the_other_flags_are_unknown(cli, tmp_path):
    shutil.copytree(SAMPLES, tmp_path / "repo")
    launcher = tmp_path / "repo" / "train_defaults.sh"
    text = launcher.read_text().replace("--per_device_train_batch_size 1", "--per_device_train_batch_size 8")
    launcher.write_text(text.replace("--gradient_accumulation_steps 16", "--gradient_accumulation_steps 2"))
    code, out, err = cli.run(tmp_path / "repo", "fix", "train_defaults.sh", "--gpu", "a10g", "--unsafe-fixes")
    assert code in (0, 1), err
    assert "--gradient_checkpointing True" in launcher.read_text()


def test_an_encoder_decoder_model_keeps_the_two_limits_apart(monkeypatch):
    runs, estimates, _ = _scan(monkeypatch)
    length = runs["train_t5.sh"].setting(K.MAX_SEQ_LENGTH)
    # AutoModelForSeq2SeqLM: the encoder reads 1024 prompt tokens, the decoder 16 response tokens; no one row of 1040
    assert isinstance(length.value, Unknown) and "encoder-decoder model (AutoModelForSeq2SeqLM)" in length.value.reason
    assert any("sequence length unknown" in note for note in estimates["train_t5.sh"].unknowns)
