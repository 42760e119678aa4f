"""Launchers written on their authors' machines name folders outside the repository: an accelerate config in the
author's home (`--config_file /home/user/configs/fsdp_8gpus.yml`), an evaluation harness checked out elsewhere
(`cd /home/user/harness && accelerate launch main.py`), a checkout users clone (`cd Megatron-LM`). What those hold
is unknown here: neither "no sharding" nor "missing". Written in our own words after GritLM's training and
evaluation scripts and OctoPack's Megatron-LM launchers."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import write_tree
from trainlint.checks._examples import TRAIN_PY

_FLAGS = ("train.py --model_name_or_path mistralai/Mistral-7B-v0.1 --bf16 True --per_device_train_batch_size 1 "
          "--gradient_checkpointing True --model_max_length 2048 --output_dir out\n")
_NO_SHARDING = ("compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nnum_processes: 8\n"
                "mixed_precision: bf16\n")


def _findings(cli, folder: Path, launcher: str, extra: dict = None) -> list:
    write_tree(folder, {"train.py": TRAIN_PY.replace("{eval_dataset}", "None"), "scripts/train.sh": launcher,
                        **(extra or {})})
    _, document = cli.check_json(folder, "--isolated", "--no-cache", "--gpu", "a100-80gb", "--num-gpus", "8")
    return sorted(f["code"] for f in document["findings"] if f["severity"] == "error")


def test_an_accelerate_config_outside_the_tree_leaves_the_sharding_unknown(cli, tmp_path):
    launcher = "accelerate launch --config_file /home/user/configs/fsdp_8gpus.yml " + _FLAGS
    assert _findings(cli, tmp_path, launcher) == []


def test_an_accelerate_config_the_tree_holds_is_read(cli, tmp_path):
    # Plain data parallel: every GPU holds the 7B model's weights, gradients and AdamW states.
    launcher = "accelerate launch --config_file configs/ddp.yml " + _FLAGS
    assert _findings(cli, tmp_path, launcher, {"configs/ddp.yml": _NO_SHARDING}) == ["TL108"]


@pytest.mark.parametrize("folder, expected", [
    ("/home/user/harness", []),  # the harness's own main.py, on the author's machine
    ("Megatron-LM", []),  # a checkout the README has users clone next to the script: not in the tree
    (".", ["TL302"]),  # the script's own folder, which holds no main.py
])
def test_a_relative_entry_after_a_cd_is_looked_for_where_the_cd_leads(cli, tmp_path, folder, expected):
    launcher = f"cd {folder}\naccelerate launch main.py --model hf-internal/tiny --tasks humaneval\n"
    assert _findings(cli, tmp_path, launcher) == expected


_ZERO3 = '{"zero_optimization": {"stage": 3}, "train_micro_batch_size_per_gpu": "auto"}\n'


@pytest.mark.parametrize("launcher_folder", ["scripts", "src/scripts"])
def test_a_relative_cd_may_start_from_the_repository_root(cli, tmp_path, launcher_folder):
    # `bash src/scripts/run.sh` from the repository's root, then `cd src/pkg`: the folder is the root's, not the
    # script's; the DeepSpeed config named after it is there.
    launcher = ("cd src/pkg\ntorchrun --nproc_per_node 8 train.py --deepspeed local_scripts/zero3.json "
                "--model_name_or_path mistralai/Mistral-7B-v0.1 --bf16 True --per_device_train_batch_size 1 "
                "--gradient_checkpointing True --model_max_length 2048 --output_dir out\n")
    write_tree(tmp_path, {"src/pkg/train.py": TRAIN_PY.replace("{eval_dataset}", "None"),
                          "src/pkg/local_scripts/zero3.json": _ZERO3, f"{launcher_folder}/run.sh": launcher})
    _, document = cli.check_json(tmp_path, "--isolated", "--no-cache", "--gpu", "a100-80gb", "--num-gpus", "8")
    assert not [f for f in document["findings"] if f["severity"] == "error"]
    [run] = document["runs"]
    assert run["settings"]["zero_stage"]["value"] == 3
    assert run["settings"]["zero_stage"]["path"] == "src/pkg/local_scripts/zero3.json"


@pytest.mark.parametrize("launch, expected", [
    ("accelerate launch ", []),  # the default config of the machine it runs on chooses the backend
    ("accelerate launch --num_processes 8 ", []),  # a process count alone leaves the backend to that config
    ("accelerate launch --multi_gpu --num_processes 8 ", ["TL108"]),  # plain data parallel, said in the launch
])
def test_accelerate_without_a_config_file_takes_its_backend_from_the_machine(cli, tmp_path, launch, expected):
    assert _findings(cli, tmp_path, launch + _FLAGS) == expected
