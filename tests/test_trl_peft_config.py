"""TRL's `peft_config=get_peft_config(model_args)` gives the trainer adapters only when the launch passes
`--use_peft` (ModelConfig's `use_peft`, off by default): a full DPO job keeps a reference copy of the model, a
`--use_peft` one trains LoRA with none."""
from __future__ import annotations

import shutil
from pathlib import Path

from trainlint.linter import lint, make_target

SAMPLES = Path(__file__).parent / "samples" / "preference" / "trl_model_config"
REFERENCE = "a frozen reference copy of the model's weights"


def _runs(monkeypatch):
    monkeypatch.chdir(SAMPLES)
    result = lint([Path(".")], make_target(gpu="a100-80gb"))
    runs = {Path(run.id.split(":")[0]).name: run for run in result.scan.runs}
    estimates = {Path(run_id.split(":")[0]).name: estimate for run_id, estimate in result.estimates.items()}
    return runs, estimates


def test_without_use_peft_the_trainer_gets_no_adapters(monkeypatch):
    runs, estimates = _runs(monkeypatch)
    lora = runs["full.sh"].setting("lora")
    assert lora is not None and lora.value is False
    assert any(REFERENCE in note for note in estimates["full.sh"].assumptions)
    assert not any("LoRA" in note for note in estimates["full.sh"].assumptions + estimates["full.sh"].unknowns)


def test_use_peft_gives_adapters_and_no_reference_copy(monkeypatch):
    runs, estimates = _runs(monkeypatch)
    lora = runs["lora.sh"].setting("lora")
    assert lora is not None and lora.value is True and lora.via[0].written_as == "--use_peft"
    assert not any(REFERENCE in note for note in estimates["lora.sh"].assumptions)


_RECIPE = """model_name_or_path: meta-llama/Llama-2-7b-hf
dataset_name: trl-lib/ultrafeedback_binarized
per_device_train_batch_size: 2
max_length: 1024
use_peft: true
output_dir: out
"""


def _lora_with_recipe(cli, tmp_path, command: str) -> dict:
    """The LoRA setting of `accelerate launch ... dpo.py COMMAND` with a recipe that says `use_peft: true`."""
    shutil.copy(SAMPLES / "dpo.py", tmp_path / "dpo.py")
    (tmp_path / "recipe.yaml").write_text(_RECIPE)
    (tmp_path / "run.sh").write_text(f"accelerate launch --num_processes 8 dpo.py {command}\n")
    _, document = cli.check_json(tmp_path, "run.sh", "--isolated", "--no-cache", "--gpu", "a100-80gb")
    return document["runs"][0]["settings"]["lora"]


def test_a_recipe_that_says_use_peft_gives_adapters(cli, tmp_path):
    lora = _lora_with_recipe(cli, tmp_path, "recipe.yaml")
    assert (lora["value"], lora["path"]) == (True, "recipe.yaml")


def test_trls_config_flag_names_the_recipe_its_parser_reads(cli, tmp_path):
    # `parser.parse_args_and_config()` takes the file `--config` names, as open-r1's README commands run it.
    lora = _lora_with_recipe(cli, tmp_path, "--config recipe.yaml")
    assert (lora["value"], lora["path"]) == (True, "recipe.yaml")


def test_a_config_file_trainlint_cannot_read_leaves_adapters_unknown(cli, tmp_path):
    lora = _lora_with_recipe(cli, tmp_path, "--config $RECIPE")
    # The file may set use_peft: neither on nor off is certain.
    assert lora["value"] is None and "--config" in lora["reason"]
