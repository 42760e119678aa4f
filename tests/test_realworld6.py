"""Constructs met in a sixth round of public fine-tuning repositories (RL and alignment frameworks, model
vendors' fine-tuning folders), written here in our own words."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import write_tree
from trainlint.core import Unknown
from trainlint.memory.plans import launcher_gpu_count
from trainlint.resolution import scan
from trainlint.resolution.workspace import Workspace
from trainlint.resolution.world import UnknownNodes


def _run(folder: Path, name: str):
    [run] = scan([folder / name], workspace=Workspace(folder)).runs
    return run


def _findings(cli, folder: Path, code: str, *extra: str):
    _, document = cli.check_json(folder, "--isolated", "--no-cache", "--gpu", "a100-80gb", "--num-gpus", "8", *extra)
    return [f for f in document["findings"] if f["code"] == code]


# ------------------------------------------------------------- a folder of scripts named like the package
_MODULE_LAUNCH = "deepspeed --module toolkit.trainers.sft --model_name_or_path meta-llama/Llama-2-7b-hf\n"


def test_a_folder_of_shell_scripts_named_like_the_package_is_not_the_package(cli, tmp_path):
    # `scripts/toolkit/` holds launchers only; the `toolkit` package comes from an installed distribution.
    write_tree(tmp_path, {"scripts/toolkit/sft.sh": _MODULE_LAUNCH, "scripts/toolkit/rm.sh": "echo rm\n"})
    assert _findings(cli, tmp_path, "TL302") == []


def test_a_package_folder_that_lacks_the_module_still_makes_it_missing(cli, tmp_path):
    write_tree(tmp_path, {"scripts/sft.sh": _MODULE_LAUNCH, "toolkit/__init__.py": "",
                          "toolkit/trainers/__init__.py": "", "toolkit/trainers/rm.py": "print(1)\n"})
    assert len(_findings(cli, tmp_path, "TL302")) == 1


# ------------------------------------------------------------- a trainer class the script defines itself
_OWN_BASE = """class LoopBase:
    def __init__(self, settings):
        self.settings = settings
"""
_DEFINES_TRAINER = """import argparse

from {base_module} import {base}


class TextTrainer({base}):
    def train(self):
        pass


def main():
    parser = argparse.ArgumentParser()
    _, rest = parser.parse_known_args()
    trainer = TextTrainer(settings=dict(zip(rest[::2], rest[1::2])))
    trainer.train()


if __name__ == "__main__":
    main()
"""
_DEFINED_LAUNCH = "deepspeed --module pkg.sft --model_name_or_path meta-llama/Meta-Llama-3-8B --output_dir out\n"


def test_a_trainer_class_defined_on_a_base_of_the_repository_brings_no_training_arguments_defaults(cli, tmp_path):
    write_tree(tmp_path, {"run.sh": _DEFINED_LAUNCH, "pkg/__init__.py": "", "pkg/base.py": _OWN_BASE,
                          "pkg/sft.py": _DEFINES_TRAINER.format(base_module="pkg.base", base="LoopBase")})
    run = _run(tmp_path, "run.sh")
    assert "optim" not in run.settings  # no TrainingArguments default is assumed
    assert "per_device_train_batch_size" not in run.settings
    assert _findings(cli, tmp_path, "TL105") == [] and _findings(cli, tmp_path, "TL108") == []


def test_a_trainer_class_defined_on_a_plain_class_of_the_script_is_its_own(tmp_path):
    script = _DEFINES_TRAINER.replace("from {base_module} import {base}\n", _OWN_BASE).format(base="LoopBase")
    write_tree(tmp_path, {"run.sh": _DEFINED_LAUNCH, "pkg/__init__.py": "", "pkg/sft.py": script})
    assert "optim" not in _run(tmp_path, "run.sh").settings


def test_a_trainer_class_defined_on_hf_trainer_keeps_its_defaults(tmp_path):
    write_tree(tmp_path, {"run.sh": _DEFINED_LAUNCH, "pkg/__init__.py": "",
                          "pkg/sft.py": _DEFINES_TRAINER.format(base_module="transformers", base="Trainer")})
    run = _run(tmp_path, "run.sh")
    assert run.settings["per_device_train_batch_size"].value == 8  # TrainingArguments' default


# ------------------------------------------------------------- a recipe checked by itself
_RECIPE = """model_name_or_path: Qwen/Qwen2-7B-Instruct
stage: sft
do_train: true
finetuning_type: full
deepspeed: {deepspeed}
dataset: my_data
template: qwen
cutoff_len: 2048
per_device_train_batch_size: 2
gradient_accumulation_steps: 8
bf16: true
"""


def test_a_relative_deepspeed_config_a_recipe_alone_names_is_unknown_not_missing(cli, tmp_path):
    # The recipe runs from the framework's checkout, which holds `examples/deepspeed/`; this tree does not.
    write_tree(tmp_path, {"finetune/sft.yaml": _RECIPE.format(deepspeed="examples/deepspeed/ds_z3_config.json")})
    assert _findings(cli, tmp_path, "TL302") == []
    assert isinstance(_run(tmp_path, "finetune/sft.yaml").settings["zero_stage"].value, Unknown)


def test_a_deepspeed_config_a_recipe_alone_names_is_read_when_it_is_there(tmp_path):
    write_tree(tmp_path, {"finetune/sft.yaml": _RECIPE.format(deepspeed="ds_z3_config.json"),
                          "finetune/ds_z3_config.json": '{"zero_optimization": {"stage": 3}}\n'})
    assert _run(tmp_path, "finetune/sft.yaml").settings["zero_stage"].value == 3


def test_a_launched_recipe_still_reports_a_missing_deepspeed_config(cli, tmp_path):
    write_tree(tmp_path, {"sft.yaml": _RECIPE.format(deepspeed="examples/deepspeed/ds_z3_config.json"),
                          "run.sh": "llamafactory-cli train sft.yaml\n"})
    assert len(_findings(cli, tmp_path, "TL302")) == 1


# ------------------------------------------------------------- a node count from the scheduler
_HF_SCRIPT = """from transformers import HfArgumentParser, TrainingArguments

args = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses()[0]
"""
_MULTI_NODE = """torchrun --nproc_per_node 8 --nnodes {nodes} --node_rank $SLURM_PROCID train.py \\
    --deepspeed zero3.json --model_name_or_path NousResearch/Nous-Hermes-2-Yi-34B --bf16 True \\
    --per_device_train_batch_size 4 --model_max_length 2048 --gradient_checkpointing True
"""
_ZERO3 = '{"zero_optimization": {"stage": 3}, "bf16": {"enabled": "auto"}}\n'


def test_an_unknown_node_count_is_not_answered_by_one_machines_gpus(cli, tmp_path):
    write_tree(tmp_path, {"run.sh": _MULTI_NODE.format(nodes="$SLURM_NNODES"), "train.py": _HF_SCRIPT,
                          "zero3.json": _ZERO3})
    assert isinstance(_run(tmp_path, "run.sh").settings["world_size"].value, UnknownNodes)
    assert _memory_findings(cli, tmp_path) == []  # sharded over 8 × N GPUs, for an N not known
    [unknown] = _findings(cli, tmp_path, "TL301", "--show-info")
    assert "does not answer it" in unknown["message"]


def test_a_single_node_launch_is_still_judged_on_its_gpus(cli, tmp_path):
    write_tree(tmp_path, {"run.sh": _MULTI_NODE.format(nodes="1"), "train.py": _HF_SCRIPT, "zero3.json": _ZERO3})
    assert _run(tmp_path, "run.sh").settings["world_size"].value == 8
    # Yi-34B fully fine-tuned at 4 × 2,048 tokens does not fit 8 × 80 GB, even at a micro-batch of 1.
    [finding] = _memory_findings(cli, tmp_path)
    assert finding["severity"] == "error"


def _memory_findings(cli, folder: Path):
    _, document = cli.check_json(folder, "--isolated", "--no-cache", "--gpu", "a100-80gb", "--num-gpus", "8")
    return [f for f in document["findings"] if f["code"] in ("TL101", "TL108", "TL111")]


_RECIPE_72B = """model_name_or_path: Qwen/Qwen2-VL-72B-Instruct
stage: sft
do_train: true
finetuning_type: full
deepspeed: ds_z3_config.json
cutoff_len: 2048
per_device_train_batch_size: 1
gradient_accumulation_steps: 2
bf16: true
"""


@pytest.mark.parametrize("nodes, world", [("$WORLD_SIZE", None), ("1", 8)])
def test_llamafactory_cli_on_every_gpu_of_several_machines_is_not_one_machines_count(cli, tmp_path, nodes, world):
    # `NNODES=$WORLD_SIZE llamafactory-cli train`: torchrun on every visible GPU of each of the scheduler's
    # machines. A 72B model's states sharded over 8 GPUs do not fit; over 8 × N, for an N not known, they may.
    launcher = f"FORCE_TORCHRUN=1 NNODES={nodes} NODE_RANK=$RANK llamafactory-cli train sft.yaml\n"
    write_tree(tmp_path, {"sft.yaml": _RECIPE_72B, "ds_z3_config.json": _ZERO3, "run.sh": launcher})
    _, document = cli.check_json(tmp_path, "--gpu", "a100-80gb", "--num-gpus", "8", "--no-cache")
    [run] = document["runs"]
    assert run["world_size"] == world
    assert [f["code"] for f in document["findings"] if f["code"] == "TL108"] == ([] if world is None else ["TL108"])


# ------------------------------------------------------------- one task under a process-starting wrapper
_RAY_DRIVER = """srun --overlap --nodes=1 --ntasks=1 -w "$head_node" \\
    python3 -m pkg.main_ppo trainer.n_gpus_per_node=8 trainer.nnodes=1 data.train_batch_size=256
"""
_HYDRA_MAIN = """import hydra


@hydra.main(config_path="config", config_name="ppo_trainer", version_base=None)
def main(config):
    from pkg.ray_trainer import RayPPOTrainer
    RayPPOTrainer(config=config).fit()


if __name__ == "__main__":
    main()
"""


def test_one_task_under_srun_states_no_gpu_count(cli, tmp_path):
    write_tree(tmp_path, {"run.sh": _RAY_DRIVER, "pkg/__init__.py": "", "pkg/main_ppo.py": _HYDRA_MAIN,
                          "pkg/ray_trainer.py": "class RayPPOTrainer:\n    pass\n"})
    assert _findings(cli, tmp_path, "TL112") == []  # the one process places its GPU workers itself
    assert launcher_gpu_count(_run(tmp_path, "run.sh")) is None  # nor a count a port would rewrite


def test_several_tasks_under_srun_still_state_their_count(cli, tmp_path):
    write_tree(tmp_path, {"run.sh": "srun --ntasks=4 python train.py --per_device_train_batch_size 2\n",
                          "train.py": _HF_SCRIPT})
    assert len(_findings(cli, tmp_path, "TL112")) == 1


# ------------------------------------------------------------- a continuation into a comment line
_COMMENTED_FLAGS = """deepspeed --include localhost:0,1 train.py \\
    # the model
    --model_name_or_path meta-llama/Llama-2-7b-hf \\
    # the batch
    --per_device_train_batch_size 14 \\
    --gradient_accumulation_steps 2 --bf16 True
"""


def test_a_backslash_that_continues_into_a_comment_line_ends_the_command(cli, tmp_path):
    write_tree(tmp_path, {"run.sh": _COMMENTED_FLAGS, "train.py": _HF_SCRIPT})
    [broken] = _findings(cli, tmp_path, "TL304")
    assert broken["line"] == 1 and "only a comment" in broken["message"]
    assert "--model_name_or_path" in broken["message"]  # the orphaned line
    assert "model_name_or_path" not in _run(tmp_path, "run.sh").settings


def test_a_comment_line_joined_without_a_blank_is_a_word_not_a_comment(cli, tmp_path):
    # `train.py\` + `#x` make the one word `train.py#x`: no comment, the command goes on.
    write_tree(tmp_path, {"run.sh": "deepspeed --include localhost:0,1 train.py\\\n#x --bf16 True\n",
                          "train.py": _HF_SCRIPT})
    assert _findings(cli, tmp_path, "TL304") == []


def test_the_repair_of_a_continuation_goes_alone_in_its_jobs_round(cli, tmp_path):
    write_tree(tmp_path, {"run.sh": _COMMENTED_FLAGS, "train.py": _HF_SCRIPT})
    cli.run(tmp_path, "fix", "--unsafe-fixes", "--gpu", "a100-80gb", "--num-gpus", "8", "--isolated")
    text = (tmp_path / "run.sh").read_text()
    assert "#" not in text  # both comment lines removed
    # No fix planned on the command as cut short (a micro-batch for 8 GPUs beside the 14 written below it).
    assert text.count("--per_device_train_batch_size") == 1


def test_comment_lines_that_end_the_command_lose_nothing(cli, tmp_path):
    launch = ("deepspeed --include localhost:0,1 train.py \\\n    --bf16 True \\\n    # --use_lora \\\n"
              "    # --lora_path x\n\necho done\n")
    write_tree(tmp_path, {"run.sh": launch, "train.py": _HF_SCRIPT})
    assert _findings(cli, tmp_path, "TL304") == []


def test_arguments_after_several_comment_lines_are_cut_off(cli, tmp_path):
    launch = ("deepspeed --include localhost:0,1 train.py \\\n    # one\n    # two\n    --bf16 True\n")
    write_tree(tmp_path, {"run.sh": launch, "train.py": _HF_SCRIPT})
    assert len(_findings(cli, tmp_path, "TL304")) == 1
    cli.run(tmp_path, "fix", "--unsafe-fixes", "--select", "TL304", "--isolated")
    assert (tmp_path / "run.sh").read_text() == "deepspeed --include localhost:0,1 train.py \\\n    --bf16 True\n"


def test_a_command_cut_short_gets_no_safe_fix_planned_on_its_remains(cli, tmp_path):
    write_tree(tmp_path, {"run.sh": _COMMENTED_FLAGS, "train.py": _HF_SCRIPT})
    cli.run(tmp_path, "fix", "--gpu", "a100-80gb", "--num-gpus", "8", "--isolated")
    assert (tmp_path / "run.sh").read_text() == _COMMENTED_FLAGS  # the repair is unsafe: nothing is written
