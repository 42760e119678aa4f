"""axolotl's own commands are jobs of the recipe they name: `axolotl train recipe.yml [overrides] [-- launcher
args]` and `accelerate launch -m axolotl.cli.train recipe.yml --key value`, with axolotl's world size and
overrides, samples in tests/samples/axolotl_cli/."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

from trainlint.core import Edit, Origin, Setting, SourceKind, SwitchPair, Unknown
from trainlint.fixers.editors.shell import replace_value
from trainlint.resolution import scan
from trainlint.resolution.workspace import Workspace

SAMPLES = Path(__file__).parent / "samples" / "axolotl_cli"
A100_2 = ("--isolated", "--gpu", "a100-80gb", "--num-gpus", "2")


def _runs(folder: Path, *names: str):
    """The jobs of `folder` (or of the named files in it), with paths shown from the folder."""
    here = os.getcwd()
    os.chdir(folder)
    try:
        return scan([Path(name) for name in names] or [Path(".")], workspace=Workspace(Path("."))).runs
    finally:
        os.chdir(here)


def _run(folder: Path, name: str):
    [run] = _runs(folder, name)
    return run


def _copy(tmp_path: Path, name: str) -> Path:
    target = tmp_path / name
    shutil.copytree(SAMPLES / name, target)
    return target


# ------------------------------------------------------------- axolotl train
def test_axolotl_train_is_one_job_of_its_recipe_with_the_command_line_over_it():
    folder = SAMPLES / "visible"
    [run] = _runs(folder)  # the recipe is the launch's job, not a second one of its own
    assert run.id == "train.sh:4" and run.launcher == "axolotl"
    assert run.entry == "examples/llama-3/lora-8b.yml" and run.recipe == "examples/llama-3/lora-8b.yml"
    micro = run.settings["per_device_train_batch_size"]
    assert micro.value == 64 and micro.kind == SourceKind.LAUNCHER_FLAG
    assert (micro.origin.path, micro.origin.line, micro.written_as) == ("train.sh", 5, "--micro-batch-size")
    packing = run.settings["packing"]
    assert packing.value is False and packing.origin.line == 6
    accumulation = run.settings["gradient_accumulation_steps"]
    assert accumulation.value == 4 and accumulation.origin.path == "examples/llama-3/lora-8b.yml"
    assert run.settings["per_device_eval_batch_size"].value == 64


def test_the_visible_gpus_of_the_env_prefix_are_axolotls_process_count():
    world = _run(SAMPLES / "visible", "train.sh").settings["world_size"]
    assert world.value == 2
    assert world.via[0].origin.path == "train.sh" and world.via[0].value == "0,1"


def test_the_axolotl_command_sets_expandable_segments_itself():
    run = _run(SAMPLES / "visible", "train.sh")
    assert run.settings["alloc_conf"].value == "expandable_segments:True"


def test_words_after_the_double_dash_go_to_the_launcher_axolotl_starts():
    folder = SAMPLES / "launcher_args"
    assert _run(folder, "accelerate.sh").settings["world_size"].value == 4
    assert _run(folder, "accelerate.sh").settings["max_seq_length"].value == 2048
    assert _run(folder, "torchrun.sh").settings["world_size"].value == 4
    assert _run(folder, "torchrun_default.sh").settings["world_size"].value == 1  # torchrun's own default
    assert _run(folder, "python.sh").settings["world_size"].value == 1


def test_num_processes_reaches_accelerate_and_a_dashed_override_with_equals_is_read():
    run = _run(SAMPLES / "launcher_args", "num_processes.sh")
    assert run.settings["world_size"].value == 2
    micro = run.settings["per_device_train_batch_size"]
    assert micro.value == 16 and micro.origin.path == "num_processes.sh"


def test_axolotl_train_without_a_stated_count_leaves_the_world_size_unknown(cli):
    run = _run(SAMPLES / "launcher_args", "no_count.sh")
    assert isinstance(run.settings["world_size"].value, Unknown)
    _, document = cli.check_json(SAMPLES / "launcher_args", "no_count.sh", "--isolated", "--no-cache",
                                 "--select", "TL301")
    assert [f["code"] for f in document["findings"]] == ["TL301"]


def test_an_underscore_option_is_no_override_of_axolotl_train():
    # click knows `--micro-batch-size` only: `--micro_batch_size 64` goes on to accelerate.
    run = _run(SAMPLES / "launcher_args", "underscore.sh")
    micro = run.settings["per_device_train_batch_size"]
    assert micro.value == 2 and micro.origin.path == "examples/lora-8b.yml"
    assert run.settings["world_size"].value == 2


def test_a_strict_recipe_drops_overrides_of_keys_it_does_not_write():
    run = _run(SAMPLES / "strict", "train.sh")
    assert run.settings["max_seq_length"].value == 2048
    assert run.settings["per_device_train_batch_size"].origin is None or \
        run.settings["per_device_train_batch_size"].origin.path != "train.sh"


# ------------------------------------------------------------- accelerate launch -m axolotl.cli.train
def test_the_module_form_reads_the_recipe_and_its_fire_overrides():
    [run] = _runs(SAMPLES / "module")
    assert run.id == "launch.sh:3" and run.launcher == "axolotl" and run.recipe == "recipes/lora-8b.yml"
    assert run.settings["world_size"].value == 2
    micro = run.settings["per_device_train_batch_size"]
    assert micro.value == 64 and (micro.origin.path, micro.origin.line) == ("launch.sh", 4)
    assert run.settings["max_seq_length"].value == 4096
    assert run.settings["model_name_or_path"].value == "NousResearch/Meta-Llama-3.1-8B"


def test_the_module_form_is_reported_at_its_override(cli):
    _, document = cli.check_json(SAMPLES / "module", *A100_2)
    found = [(f["code"], f["path"], f["line"]) for f in document["findings"] if f["severity"] == "error"]
    assert ("TL101", "launch.sh", 4) in found


def test_the_module_form_without_a_backend_shards_as_the_machines_default_config(tmp_path):
    # No --config_file and no --multi_gpu: accelerate takes DeepSpeed, FSDP or plain data parallel from the default
    # config of the machine, as for any script it launches; the recipe's own settings stay the recipe's.
    folder = _copy(tmp_path, "module")
    launch = folder / "launch.sh"
    launch.write_text(launch.read_text().replace("--multi_gpu ", ""))
    run = _run(folder, "launch.sh")
    assert run.settings["zero_stage"].value.reason.startswith("`accelerate launch` without --config_file")
    assert run.settings["world_size"].value == 2 and run.settings["gradient_accumulation_steps"].value == 1


# ------------------------------------------------------------- fix
def _effective_batch(run) -> int:
    return (run.settings["per_device_train_batch_size"].value * run.settings["gradient_accumulation_steps"].value
            * run.settings["world_size"].value)


def test_fix_rewrites_the_override_flag_and_the_recipe_keeping_the_global_batch(tmp_path, cli):
    folder = _copy(tmp_path, "visible")
    before = _effective_batch(_run(folder, "train.sh"))
    code, out, _ = cli.run(folder, "fix", *A100_2, "--preserve-effective-batch")
    script = (folder / "train.sh").read_text()
    assert "--micro-batch-size 64" not in script and "--micro-batch-size " in script
    assert "--no-sample-packing" in script and "per_device" not in script and "--gradient" not in script
    assert "gradient_accumulation_steps: 4\n" not in (folder / "examples/llama-3/lora-8b.yml").read_text()
    assert _effective_batch(_run(folder, "train.sh")) == before
    files = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    cli.run(folder, "fix", *A100_2, "--preserve-effective-batch")
    assert {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()} == files


def test_fix_of_the_module_form_adds_accumulation_to_the_recipe_not_to_the_command(tmp_path, cli):
    folder = _copy(tmp_path, "module")
    before = _effective_batch(_run(folder, "launch.sh"))
    cli.run(folder, "fix", *A100_2, "--preserve-effective-batch")
    script = (folder / "launch.sh").read_text()
    assert "--micro_batch_size 64" not in script and "gradient" not in script and "per_device" not in script
    assert "gradient_accumulation_steps:" in (folder / "recipes/lora-8b.yml").read_text()
    assert _effective_batch(_run(folder, "launch.sh")) == before
    files = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    cli.run(folder, "fix", *A100_2, "--preserve-effective-batch")
    assert {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()} == files


def test_a_switch_pair_is_rewritten_as_its_other_side_never_with_a_value_word():
    data = b"axolotl train r.yml --no-sample-packing\n"
    origin = Origin("t.sh", 1, 21, 1, 40, 20, 39)
    switch = Setting(False, SourceKind.LAUNCHER_FLAG, origin, "--no-sample-packing",
                     written_as="--no-sample-packing", switch=SwitchPair("--sample-packing", "--no-sample-packing"))
    assert replace_value(data, switch, "--no-sample-packing", True) == Edit(origin, "--sample-packing")


def test_a_recipe_not_in_the_tree_is_unknown_not_missing(cli):
    # A deployment template writes `train.yaml` beside its run script before it starts axolotl.
    folder = SAMPLES / "template"
    [run] = _runs(folder)
    assert run.settings["world_size"].value == 8
    _, document = cli.check_json(folder, "--isolated", "--no-cache")
    assert [f["code"] for f in document["findings"] if f["severity"] == "error"] == []
