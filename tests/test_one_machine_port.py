"""A recipe published for several nodes, ported to the one machine a user has. When the launcher derives its
node count from its GPU count (`NODES=$((GPUS / GPUS_PER_NODE))`, `srun --nodes=${NODES} --ntasks=${GPUS}`),
rewriting the GPU count alone moves the whole launch onto one node, and an accumulation computed from the
same count keeps the global batch. A node count written on its own is left for a person to change."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

SAMPLES = Path(__file__).parent / "samples" / "one_machine_port"
ONE_MACHINE = ("--gpu", "a100-80gb", "--num-gpus", "8")


def _repo(tmp_path):
    shutil.copytree(SAMPLES, tmp_path / "repo")
    return tmp_path / "repo"


def _shown(out: str, name: str) -> str:
    """The value `trainlint show` gives `name` (its table's second column)."""
    row = next(line for line in out.splitlines() if re.match(rf"^\W*{name}\s", line))
    return row.split("│")[2].strip()


def test_a_node_count_that_follows_the_gpu_count_is_ported_by_the_count_alone(cli, tmp_path):
    repo = _repo(tmp_path)
    script = repo / "shell" / "sft_32gpus.sh"
    before = script.read_text().splitlines()
    code, out, err = cli.run(repo, "fix", *ONE_MACHINE, "shell/sft_32gpus.sh")
    assert code in (0, 1), err
    after = script.read_text().splitlines()
    changed = [(old, new) for old, new in zip(before, after) if old != new]
    # one line changes: the node count and the accumulation follow the GPU count as bash computes them
    assert changed == [("GPUS=${GPUS:-32}", "GPUS=${GPUS:-8}")]
    code, out, err = cli.run(repo, "check", *ONE_MACHINE, "--output-format", "concise", "shell/sft_32gpus.sh")
    assert "TL112" not in out


def test_the_ported_job_keeps_its_global_batch(cli, tmp_path):
    repo = _repo(tmp_path)
    code, out, err = cli.run(repo, "show", "shell/sft_32gpus.sh", *ONE_MACHINE)
    assert (_shown(out, "world_size"), _shown(out, "gradient_accumulation_steps")) == ("32", "1")
    cli.run(repo, "fix", *ONE_MACHINE, "shell/sft_32gpus.sh")
    code, out, err = cli.run(repo, "show", "shell/sft_32gpus.sh", *ONE_MACHINE)
    assert (_shown(out, "world_size"), _shown(out, "gradient_accumulation_steps")) == ("8", "4")
    assert _shown(out, "effective batch") == "128"


def test_a_machine_smaller_than_one_node_is_left_to_a_person(cli, tmp_path):
    repo = _repo(tmp_path)
    before = (repo / "shell" / "sft_32gpus.sh").read_bytes()
    code, out, err = cli.run(repo, "fix", "--gpu", "a100-80gb", "--num-gpus", "4", "shell/sft_32gpus.sh")
    # four GPUs would make NODES=$((4 / 8)) zero, and each node still asks for eight
    assert (repo / "shell" / "sft_32gpus.sh").read_bytes() == before
    assert "the launch spans 4 nodes; change its GPU count by hand (each of its nodes has 8 GPUs, the machine 4)" \
        in out + err


def test_a_node_count_written_apart_from_the_gpu_count_is_left_to_a_person(cli, tmp_path):
    repo = _repo(tmp_path)
    before = (repo / "shell" / "sft_fixed_nodes.sh").read_bytes()
    code, out, err = cli.run(repo, "fix", *ONE_MACHINE, "shell/sft_fixed_nodes.sh")
    assert (repo / "shell" / "sft_fixed_nodes.sh").read_bytes() == before
    assert ("the launch spans 4 nodes; change its GPU count by hand: its node count at shell/sft_fixed_nodes.sh:6:6 "
            "does not follow the GPU count") in out + err


def test_a_per_node_count_beside_a_node_count_is_left_to_a_person(cli, tmp_path):
    repo = _repo(tmp_path)
    before = (repo / "shell" / "sft_torchrun_2nodes.sh").read_bytes()
    code, out, err = cli.run(repo, "fix", *ONE_MACHINE, "shell/sft_torchrun_2nodes.sh")
    assert (repo / "shell" / "sft_torchrun_2nodes.sh").read_bytes() == before
    # --nproc_per_node already says 8: only --nnodes differs, and it is not a count trainlint rewrites
    assert ("the launch spans 2 nodes; change its GPU count by hand: its node count at "
            "shell/sft_torchrun_2nodes.sh:4:19 is written on its own") in out + err
