"""Constructs met while checking public fine-tuning repositories end to end (LLaMA-Factory recipes that name
no precision, CPU-offloaded experts, accelerate config templates), reproduced in tests/samples/realworld3/."""
from __future__ import annotations

import shutil
from pathlib import Path

from trainlint.resolution import scan
from trainlint.resolution.workspace import Workspace

SAMPLES = Path(__file__).parent / "samples" / "realworld3"
A100 = ("--isolated", "--no-cache", "--gpu", "a100-80gb", "--num-gpus", "8")


def _run(folder: Path, name: str):
    [run] = scan([folder / name], workspace=Workspace(folder)).runs
    return run


def _findings(cli, folder: Path, *argv: str):
    _, document = cli.check_json(folder, *A100, *argv)
    return [(f["code"], f["path"], f["severity"]) for f in document["findings"]]


# ------------------------------------------------------------- LLaMA-Factory without a precision key
def test_llamafactory_adapter_recipe_without_precision_loads_the_base_in_16_bits():
    run = _run(SAMPLES / "lf_precision", "adapter_no_precision.yaml")
    dtype = run.settings["torch_dtype"]
    assert dtype.value == "bfloat16" and "finetuning_type lora" in dtype.note
    assert run.settings["lora"].value is True


def test_llamafactory_defaults_to_lora_when_no_method_is_written():
    run = _run(SAMPLES / "lf_precision", "default_method_no_precision.yaml")
    assert run.settings["finetuning_type"].value == "lora"
    assert run.settings["lora"].value is True
    assert run.settings["torch_dtype"].value == "bfloat16"


def test_llamafactory_full_tune_without_precision_stays_fp32():
    run = _run(SAMPLES / "lf_precision", "full_no_precision.yaml")
    assert "torch_dtype" not in run.settings


def test_tl105_reports_only_the_llamafactory_recipe_that_really_trains_in_fp32(cli):
    found = [(code, path) for code, path, _ in _findings(cli, SAMPLES / "lf_precision") if code == "TL105"]
    assert found == [("TL105", "full_no_precision.yaml")]


def test_llamafactory_badam_keeps_half_weights_without_precision():
    run = _run(SAMPLES / "lf_precision", "blockwise_no_precision.yaml")
    assert run.settings["torch_dtype"].value == "bfloat16"
    assert "use_badam" in run.settings["torch_dtype"].note


# ------------------------------------------------------------------- experts kept on the CPU
def test_ktransformers_recipe_is_out_of_the_memory_models_scope(cli):
    run = _run(SAMPLES / "lf_cpu_experts", "moe_lora_cpu_experts.yaml")
    assert "KTransformers" in run.settings["memory_out_of_scope"].value
    assert _findings(cli, SAMPLES / "lf_cpu_experts") == []


def test_estimate_says_why_a_ktransformers_recipe_is_out_of_scope(cli):
    code, out, _ = cli.run(SAMPLES / "lf_cpu_experts", "estimate", "moe_lora_cpu_experts.yaml", *A100[:1],
                           "--gpu", "a100-80gb")
    assert "use_kt: KTransformers keeps the MoE experts in CPU memory" in out
    assert "no memory rule judges this job" in out


# --------------------------------------------------------------------- accelerate config files
def test_only_the_accelerate_config_a_launch_names_is_checked_for_its_gpu_count(cli):
    found = [(code, path) for code, path, _ in _findings(cli, SAMPLES / "accelerate_templates") if code == "TL112"]
    # four_gpu_ddp.yaml is named by no launch: a template, not a job.
    assert found == [("TL112", "configs/two_gpu_fsdp.yaml")]


def test_an_accelerate_config_alone_is_not_a_job(cli, tmp_path):
    shutil.copytree(SAMPLES / "accelerate_templates" / "configs", tmp_path / "configs")
    _, document = cli.check_json(tmp_path, *A100)
    assert document["findings"] == []


# ------------------------------------------------------------------------------ axolotl defaults
def test_axolotl_recipe_without_precision_keys_trains_in_16_bits():
    run = _run(SAMPLES / "axolotl_defaults", "adapter_auto_precision.yml")
    assert run.settings["bf16"].value == "auto"
    assert run.settings["torch_dtype"].value == "bfloat16"


def test_axolotl_precision_default_raises_nothing_on_a100_or_v100(cli):
    folder = SAMPLES / "axolotl_defaults"
    assert _findings(cli, folder) == []
    _, document = cli.check_json(folder, "--isolated", "--no-cache", "--gpu", "v100-32gb", "--num-gpus", "8")
    assert [f["code"] for f in document["findings"]] == []


def test_axolotl_remote_training_plugin_is_out_of_the_memory_models_scope():
    run = _run(SAMPLES / "axolotl_defaults", "remote_service.yml")
    assert "remote service" in run.settings["memory_out_of_scope"].value
