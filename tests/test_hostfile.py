"""`deepspeed --hostfile FILE`: the world size is read from the machines the hostfile lists, as DeepSpeed's runner
counts them (every slot, the first --num_nodes hosts, --num_gpus on each host)."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import write_tree
from trainlint.checks._examples import TRAIN_PY
from trainlint.core import Unknown
from trainlint.linter import lint, make_target
from trainlint.memory.plans import launcher_gpu_count
from trainlint.readers.hostfile import read_hostfile
from trainlint.resolution import scan
from trainlint.resolution.workspace import Workspace

FOUR_HOSTS = ("# four machines of eight GPUs\nnode-0 slots=8\nnode-1 slots=8\nnode-2 slots=8  # spare rack\n"
              "node-3 slots=8\n")
ZERO3 = '{"zero_optimization": {"stage": 3}, "bf16": {"enabled": "auto"}, "train_micro_batch_size_per_gpu": "auto"}\n'
LAUNCH = ("#!/bin/bash\ndeepspeed {options} train.py --deepspeed zero3.json \\\n"
          "    --model_name_or_path mistralai/Mixtral-8x7B-v0.1 --bf16 True --per_device_train_batch_size 1 \\\n"
          "    --gradient_accumulation_steps 1 --model_max_length 2048 --gradient_checkpointing True \\\n"
          "    --output_dir out\n")


def _job(tmp_path: Path, options: str, hostfile: str = FOUR_HOSTS) -> Path:
    write_tree(tmp_path, {"hostfile_4": hostfile, "zero3.json": ZERO3,
                          "train.py": TRAIN_PY.replace("{eval_dataset}", "None"),
                          "train.sh": LAUNCH.format(options=options)})
    return tmp_path


def _world(folder: Path):
    [run] = scan([folder / "train.sh"], workspace=Workspace(folder)).runs
    return run, run.settings["world_size"].value


@pytest.mark.parametrize("options, world", [
    ("--hostfile hostfile_4", 32),
    ("--hostfile=hostfile_4 --num_nodes 2", 16),
    ("--hostfile hostfile_4 --num_gpus 4", 16),
    ("--hostfile hostfile_4 --num_nodes 3 --num_gpus 2", 6),
])
def test_the_world_size_is_the_gpus_of_the_hosts_deepspeed_starts(tmp_path, options, world):
    run, found = _world(_job(tmp_path, options))
    assert found == world
    stated = launcher_gpu_count(run)
    assert stated is not None and stated.count == world and stated.nodes > 1


def test_a_multi_node_hostfile_job_is_judged_on_its_own_gpus_not_on_the_machine_given(tmp_path):
    # 8x7B under ZeRO-3 does not fit 8 x 80 GB, but the launch runs on the hostfile's 32 GPUs: no memory error,
    # and TL112 says the launch spans more machines than the GPUs given (a warning: it waits for its nodes).
    result = lint([_job(tmp_path, "--hostfile hostfile_4")], make_target("a100-80gb", None, 8))
    codes = {(f.code, f.severity.value) for f in result.findings}
    assert ("TL112", "warning") in codes
    assert not any(code == "TL108" for code, _ in codes)


@pytest.mark.parametrize("hostfile", ["node-0 slots=8\nnode-1\n", "node-0 slots=8\nnode-0 slots=8\n", ""])
def test_a_hostfile_deepspeed_would_reject_or_an_empty_one_leaves_the_world_unknown(tmp_path, hostfile):
    _, found = _world(_job(tmp_path, "--hostfile hostfile_4", hostfile))
    assert isinstance(found, Unknown)


def test_a_hostfile_outside_the_tree_leaves_the_world_unknown(tmp_path):
    _, found = _world(_job(tmp_path, "--hostfile /job/hostfile"))
    assert isinstance(found, Unknown)


def test_each_slot_count_keeps_the_place_it_was_written(tmp_path):
    path = tmp_path / "hostfile"
    path.write_text(FOUR_HOSTS)
    hosts = read_hostfile(path).hosts
    assert [(name, slots.value) for name, slots in hosts] == [(f"node-{i}", 8) for i in range(4)]
    third = hosts[2][1].origin
    assert (third.line, path.read_bytes()[third.start_byte:third.end_byte]) == (4, b"8")
