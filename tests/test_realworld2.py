"""Constructs met in a second round of public fine-tuning repositories (Qwen-, Bunny-, alpaca- and
ShareGPT4V-style launchers), reproduced in tests/samples/realworld2/ in our own words."""
from __future__ import annotations

from pathlib import Path

from trainlint.core import Unknown
from trainlint.resolution import scan
from trainlint.resolution.workspace import Workspace

SAMPLES = Path(__file__).parent / "samples" / "realworld2"


def _run(folder: Path, name: str):
    [run] = scan([folder / name], workspace=Workspace(folder)).runs
    return run


def _value(run, knob):
    setting = run.settings.get(knob)
    return None if setting is None else setting.value


def _notes(run, knob):
    return [upstream.note for upstream in run.settings[knob].chain()]


# ----------------------------------------------------------------------- option-parsing loops
def test_value_an_option_loop_may_replace_keeps_its_default():
    run = _run(SAMPLES / "option_loop", "run_case.sh")
    assert _value(run, "model_name_or_path") == "meta-llama/Llama-2-7b-hf"
    assert _value(run, "per_device_train_batch_size") == 4
    assert any("an option of the script" in note for note in _notes(run, "model_name_or_path"))
    # The default is written at its assignment, where a fix would edit it.
    origins = [s.origin.line for s in run.settings["per_device_train_batch_size"].chain() if s.origin]
    assert 4 in origins


def test_getopts_option_and_positional_fallback_keep_their_defaults():
    run = _run(SAMPLES / "option_loop", "run_getopts.sh")
    assert _value(run, "model_name_or_path") == "meta-llama/Llama-2-7b-hf"
    # `${1:-2}`: the script's first argument, or 2 as written; read like an environment fallback.
    assert _value(run, "world_size") == 2
    assert any(note.startswith("default of $1") for note in _notes(run, "world_size"))


def test_value_taken_only_from_the_arguments_stays_unknown():
    run = _run(SAMPLES / "option_loop", "run_required.sh")
    assert isinstance(_value(run, "model_name_or_path"), Unknown)


# --------------------------------------------------- data module built in another module
def test_eval_dataset_none_in_an_imported_data_module_builder_turns_evaluation_off():
    folder = SAMPLES / "imported_data_module"
    run = _run(folder, "scripts/finetune.sh")
    assert run.facts.eval_dataset is False
    assert _value(run, "eval_strategy") == "steps"


def test_eval_dataset_from_an_imported_builder_that_returns_one_keeps_evaluation():
    run = _run(SAMPLES / "imported_data_module", "scripts/finetune_holdout.sh")
    assert run.facts.eval_dataset is not False


def test_no_eval_rule_fires_when_the_imported_builder_passes_no_eval_dataset(cli):
    folder = SAMPLES / "imported_data_module"
    _, quiet = cli.check_json(folder, "scripts/finetune.sh", "--gpu", "a100-80gb")
    assert not [f for f in quiet["findings"] if f["code"] in ("TL103", "TL104", "TL107")]
    _, loud = cli.check_json(folder, "scripts/finetune_holdout.sh", "--gpu", "a100-80gb")
    loud_codes = {f["code"] for f in loud["findings"]}
    # Evaluation runs there; how far it peaks above training is not known (the model is named in code only).
    assert "TL103" in loud_codes and "TL104" not in loud_codes
