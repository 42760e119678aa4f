"""A recipe published for several nodes, ported to the one machine a user has. When the launcher derives its
node count from its GPU count (`NODES=$((GPUS / GPUS_PER_NODE))`, `srun --nodes=${NODES} --ntasks=${GPUS}`),
rewriting the GPU count alone moves the whole launch onto one node (tests/test_ports.py, `srun_multinode`).
A node count written on its own, or a machine smaller than one node, is left for a person to change."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

SAMPLES = Path(__file__).parent / "samples"
ONE_MACHINE = ("--gpu", "a100-80gb", "--num-gpus", "8")


def _repo(tmp_path, name):
    shutil.copytree(SAMPLES / name, tmp_path / "repo")
    return tmp_path / "repo"


def test_the_port_changes_only_the_gpu_count_and_its_followers_keep_the_global_batch(cli, tmp_path):
    repo = _repo(tmp_path, "ports/srun_multinode")
    before = (repo / "train.sh").read_text().splitlines()
    code, out, err = cli.run(repo, "fix", *ONE_MACHINE, "--diff", "train.sh")
    assert "effective batch 128 (unchanged)" in out + err
    cli.run(repo, "fix", *ONE_MACHINE, "train.sh")
    after = (repo / "train.sh").read_text().splitlines()
    # one line changes: the node count and the accumulation follow the GPU count as bash computes them
    assert [(old, new) for old, new in zip(before, after) if old != new] == [("GPUS=${GPUS:-32}", "GPUS=${GPUS:-8}")]
    code, out, err = cli.run(repo, "check", *ONE_MACHINE, "--output-format", "concise", "train.sh")
    assert "TL112" not in out


def test_a_machine_smaller_than_one_node_is_left_to_a_person(cli, tmp_path):
    repo = _repo(tmp_path, "ports/srun_multinode")
    before = (repo / "train.sh").read_bytes()
    code, out, err = cli.run(repo, "fix", "--gpu", "a100-80gb", "--num-gpus", "4", "train.sh")
    # four GPUs would make NODES=$((4 / 8)) zero, and each node still asks for eight
    assert (repo / "train.sh").read_bytes() == before
    assert "the launch spans 4 nodes; change its GPU count by hand (each of its nodes has 8 GPUs, the machine 4)" \
        in out + err


@pytest.mark.parametrize("launcher, reason", [
    # srun's node count is a number of its own: rewriting the GPU count would not move it
    ("fixed_nodes.sh", "its node count at fixed_nodes.sh:6:6 does not follow the GPU count"),
    # --nproc_per_node already says 8: only --nnodes differs, and it is not a count trainlint rewrites
    ("torchrun_2nodes.sh", "its node count at torchrun_2nodes.sh:4:19 is written on its own"),
])
def test_a_node_count_written_apart_from_the_gpu_count_is_left_to_a_person(cli, tmp_path, launcher, reason):
    repo = _repo(tmp_path, "ports/srun_multinode")
    before = (repo / launcher).read_bytes()
    code, out, err = cli.run(repo, "fix", *ONE_MACHINE, launcher)
    assert (repo / launcher).read_bytes() == before
    assert f"change its GPU count by hand: {reason}" in out + err
