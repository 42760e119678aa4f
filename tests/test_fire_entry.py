"""python-fire entry points (`fire.Fire(train)`): the function's parameters are the script's flags, its signature's
defaults the values a launch that passes none trains with, and a bare parameter name inside it reads the flag."""
from __future__ import annotations

from pathlib import Path

from tests.conftest import read_python_whole
from trainlint.core import Severity, SourceKind, Unknown
from trainlint.linter import lint, make_target
from trainlint.readers.facts import FIRE_OWNER
from trainlint.readers.python import read_python

SAMPLES = Path(__file__).parent / "samples" / "fire_entry"


def _scan(monkeypatch):
    monkeypatch.chdir(SAMPLES)
    result = lint([Path(".")], make_target(gpu="a100-80gb"))
    runs = {Path(run.id.split(":")[0]).name: run for run in result.scan.runs}
    estimates = {Path(run_id.split(":")[0]).name: estimate for run_id, estimate in result.estimates.items()}
    return runs, estimates, result.findings


def test_the_signature_gives_the_values_a_launch_leaves_unset(monkeypatch):
    runs, estimates, _ = _scan(monkeypatch)
    run = runs["finetune.sh"]
    length = run.setting("max_seq_length")
    assert length.value == 512 and length.kind is SourceKind.PARAMETER_DEFAULT
    assert (length.origin.path, length.origin.line) == ("finetune.py", 21)
    assert run.setting("num_train_epochs").value == 2
    assert not any("sequence length" in note for note in estimates["finetune.sh"].unknowns)


def test_flags_reach_the_keywords_that_read_the_parameter(monkeypatch):
    runs, _, _ = _scan(monkeypatch)
    run = runs["finetune.sh"]
    batch = run.setting("per_device_train_batch_size")
    assert batch.value == 32 and batch.kind is SourceKind.LAUNCHER_FLAG and batch.origin.path == "finetune.sh"
    assert run.setting("lora_r").value == 8  # `--lora-r=8`: fire takes dashes for underscores
    assert run.value("model_name_or_path") == "huggyllama/llama-7b"


def test_a_parameter_the_function_rebinds_is_unknown(monkeypatch):
    runs, _, _ = _scan(monkeypatch)
    # `eval_batch = min(eval_batch, micro_batch_size)` before TrainingArguments reads it
    assert isinstance(runs["finetune.sh"].setting("per_device_eval_batch_size").value, Unknown)


def test_words_without_a_flag_go_to_the_parameters_in_order(monkeypatch):
    runs, _, _ = _scan(monkeypatch)
    run = runs["positional.sh"]
    assert run.value("model_name_or_path") == "huggyllama/llama-7b"
    assert run.value("per_device_train_batch_size") == 4  # named by its flag, so skipped by the positions
    assert run.value("num_train_epochs") == 3  # the fifth word: batch_size took the fourth


def test_a_flag_no_parameter_takes_is_a_warning_and_fires_no_spelling_is_accepted(monkeypatch):
    _, _, findings = _scan(monkeypatch)
    refused = [f for f in findings if f.code == "TL305"]
    assert [(f.origin.path, f.origin.line, f.severity) for f in refused] == [("misspelled.sh", 2, Severity.WARNING)]
    assert "--cutoff_length" in refused[0].message and "--nogroup_by_length" not in refused[0].message


def test_the_planned_reading_matches_the_whole_module(tmp_path):
    path = SAMPLES / "finetune.py"
    module = read_python(path)
    assert module == read_python_whole(path)
    parameters = [arg.name for arg in module.argparse_args if arg.owner == FIRE_OWNER]
    assert parameters[:5] == ["base_model", "data_path", "output_dir", "batch_size", "micro_batch_size"]
    assert module.builds_parser and not module.takes_any_flag


def test_only_a_function_the_module_defines_is_read(tmp_path):
    cases = {
        "a class": "class Commands:\n    def train(self, lr: float = 1e-4):\n        pass\n\nfire.Fire(Commands)\n",
        "a dict of commands": "def train(lr: float = 1e-4):\n    pass\n\nfire.Fire({'train': train})\n",
        "an imported function": "from tools import train\n\nfire.Fire(train)\n",
        "the whole module": "def train(lr: float = 1e-4):\n    pass\n\nfire.Fire()\n",
    }
    for name, body in cases.items():
        path = tmp_path / "cli.py"
        path.write_text("import fire\n" + body)
        assert read_python(path).argparse_args == (), name
    path.write_text("import fire\n\ndef train(lr: float = 1e-4, **overrides):\n    pass\n\n"
                    "if __name__ == '__main__':\n    fire.Fire(train)\n")
    module = read_python(path)
    assert [arg.name for arg in module.argparse_args] == ["lr"] and module.takes_any_flag


def test_a_batch_that_overflows_only_with_rows_near_a_short_limit_is_a_warning(monkeypatch):
    # 256 tokens is the shortest length the fitting search proposed: shorter rows were never tried, and a job whose
    # overflow rests on how long its rows are was an error
    monkeypatch.chdir(SAMPLES)
    result = lint([Path("big_batch.sh")], make_target(gpu="a100-40gb"))
    [finding] = [f for f in result.findings if f.code == "TL101"]
    assert finding.severity is Severity.WARNING
    assert "rows up to about" in finding.message and "256-token limit" in finding.message
