"""A port that needs other ZeRO settings, for a job whose DeepSpeed config other jobs share, when no config beside it
holds them: the job gets a copy of the config of its own, with the plan written in, and its `--deepspeed` points
there. The shared config, and every job that reads it, stays as it was."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.test_sibling_configs import PORT, SAMPLES, port  # the same sample and target
from trainlint.fixers.engine import FixSession
from trainlint.linter import lint, make_target

COPIES = {"finetune_13b.sh": "finetune_13b_zero3_offload.json",
          "finetune_13b_long.sh": "finetune_13b_long_zero3_offload.json"}


def _repo(tmp_path: Path) -> Path:
    """The sibling sample without the config that holds the plan (LLaVA's zero3_offload.json)."""
    repo = tmp_path / "repo"
    shutil.copytree(SAMPLES, repo)
    (repo / ".git").mkdir()
    (repo / "scripts" / "zero3_offload.json").unlink()
    return repo


def _without_zero(config: dict) -> dict:
    return {key: value for key, value in config.items() if key != "zero_optimization"}


def test_each_job_gets_a_copy_of_the_shared_config_with_the_plan(cli, tmp_path):
    repo = _repo(tmp_path)
    original = json.loads((repo / "scripts" / "zero2.json").read_text())
    assert "scripts/finetune_13b_zero3_offload.json (new)" in port(cli, repo)
    for launcher, copy in COPIES.items():
        assert f"    --deepspeed ./scripts/{copy} \\" in (repo / "scripts" / launcher).read_text().splitlines()
        written = json.loads((repo / "scripts" / copy).read_text())
        # every key outside ZeRO as it was; ZeRO-3 with the optimizer on the CPU, the rest of the block kept
        assert _without_zero(written) == _without_zero(original)
        zero = written["zero_optimization"]
        assert zero["stage"] == 3 and zero["offload_optimizer"]["device"] == "cpu"
        assert {key: value for key, value in zero.items() if key not in ("stage", "offload_optimizer")} == \
            {key: value for key, value in original["zero_optimization"].items() if key != "stage"}


def test_check_names_the_copy_it_would_make(cli, tmp_path):
    code, out, err = cli.run(_repo(tmp_path), "check", *PORT)
    assert ("= fix (safe): deepspeed ./scripts/zero2.json → ./scripts/finetune_13b_zero3_offload.json — port plan: "
            "ZeRO-2 -> ZeRO-3; optimizer states offloaded to CPU") in out
    assert ("scripts/finetune_13b_zero3_offload.json is a new copy of scripts/zero2.json with zero_stage 3, "
            "offload_optimizer cpu") in out
    code, out, err = cli.run(_repo(tmp_path / "json"), "check", *PORT, "--output-format", "json")
    edits = [edit for finding in json.loads(out)["findings"] if finding["fix"] for edit in finding["fix"]["edits"]]
    created = [edit for edit in edits if edit.get("creates")]
    assert sorted(edit["path"] for edit in created) == [f"scripts/{copy}" for copy in sorted(COPIES.values())]
    assert all(json.loads(edit["content"])["zero_optimization"]["stage"] == 3 for edit in created)


def test_the_preview_shows_a_new_file_that_git_applies_and_writes_nothing(cli, tmp_path):
    repo = _repo(tmp_path)
    before = sorted(path.name for path in (repo / "scripts").iterdir())
    code, out, err = cli.run(repo, "fix", "--diff", *PORT)
    assert "--- /dev/null\n+++ b/scripts/finetune_13b_zero3_offload.json\n" in out
    assert sorted(path.name for path in (repo / "scripts").iterdir()) == before
    assert "Would fix 2 findings" in err  # the summary goes to stderr, the diff alone to stdout
    (tmp_path / "fix.patch").write_text(out)
    subprocess.run(["git", "init", "-q", str(tmp_path / "applied")], check=True)
    shutil.copytree(repo / "scripts", tmp_path / "applied" / "scripts")
    applied = subprocess.run(["git", "apply", str(tmp_path / "fix.patch")], cwd=tmp_path / "applied",
                             capture_output=True, text=True)
    assert applied.returncode == 0, applied.stderr
    cli.run(repo, "fix", *PORT)
    for copy in COPIES.values():
        assert (tmp_path / "applied" / "scripts" / copy).read_bytes() == (repo / "scripts" / copy).read_bytes()


def test_a_file_of_the_copys_name_is_never_written_over(cli, tmp_path):
    repo = _repo(tmp_path)
    (repo / "scripts" / "finetune_13b_zero3_offload.json").write_text('{"someone": "else"}\n')
    code, out, err = cli.run(repo, "fix", "scripts/finetune_13b.sh", *PORT)
    assert (repo / "scripts" / "finetune_13b_zero3_offload.json").read_text() == '{"someone": "else"}\n'
    assert "--deepspeed ./scripts/zero2.json" in (repo / "scripts" / "finetune_13b.sh").read_text()
    assert "give this job a copy of its own, or change it by hand (scripts/finetune_13b_zero3_offload.json is " \
        "already there; point the job at a copy of scripts/zero2.json of its own by hand)" in out


def test_two_jobs_of_one_name_whose_copies_would_be_the_same_share_it(cli, tmp_path):
    repo = _repo(tmp_path)
    (repo / "scripts" / "v1").mkdir()
    shutil.copy(repo / "scripts" / "finetune_13b.sh", repo / "scripts" / "v1" / "finetune_13b.sh")
    code, out, err = cli.run(repo, "fix", *PORT)
    for launcher in ("scripts/finetune_13b.sh", "scripts/v1/finetune_13b.sh"):
        assert "--deepspeed ./scripts/finetune_13b_zero3_offload.json" in (repo / launcher).read_text()
    # A later fix of a job put back as it was finds the copies there (as siblings now), and takes one as it is.
    configs = {path.name: path.read_bytes() for path in (repo / "scripts").glob("*.json")}
    shutil.copy(SAMPLES / "scripts" / "finetune_13b.sh", repo / "scripts" / "v1" / "finetune_13b.sh")
    shutil.copy(SAMPLES / "scripts" / "finetune_13b_long.sh", repo / "scripts")  # so zero2.json is shared still
    code, out, err = cli.run(repo, "fix", "scripts/v1/finetune_13b.sh", *PORT)
    assert "--deepspeed ./scripts/finetune_13b_long_zero3_offload.json" in \
        (repo / "scripts/v1/finetune_13b.sh").read_text()
    assert {path.name: path.read_bytes() for path in (repo / "scripts").glob("*.json")} == configs


def test_a_config_launchers_outside_the_check_name_gets_a_copy_too(cli, tmp_path):
    repo = _repo(tmp_path)
    shared = (repo / "scripts" / "zero2.json").read_bytes()
    code, out, err = cli.run(repo, "fix", "scripts/finetune_13b.sh", *PORT)
    assert code in (0, 1), err
    assert (repo / "scripts" / "zero2.json").read_bytes() == shared  # finetune_13b_long.sh reads it too
    assert "--deepspeed ./scripts/finetune_13b_zero3_offload.json" in (repo / "scripts" / "finetune_13b.sh").read_text()
    assert "--deepspeed ./scripts/zero2.json" in (repo / "scripts" / "finetune_13b_long.sh").read_text()


def test_a_fix_that_fails_after_its_round_removes_the_copy_it_made(tmp_path, monkeypatch):
    repo = _repo(tmp_path)
    monkeypatch.chdir(repo)
    target = make_target(gpu="a100-40gb", num_gpus=8)
    calls = []

    def lint_then_fail():
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("a fault after the first round")
        return lint([Path("scripts/finetune_13b.sh")], target)

    with pytest.raises(RuntimeError, match="a fault after the first round"):
        FixSession(lint_then_fail, unsafe=False, preserve=True).run()
    assert not (repo / "scripts" / "finetune_13b_zero3_offload.json").exists()
    assert "--deepspeed ./scripts/zero2.json" in (repo / "scripts" / "finetune_13b.sh").read_text()
    # and without the fault it is made
    FixSession(lambda: lint([Path("scripts/finetune_13b.sh")], target), unsafe=False, preserve=True).run()
    assert (repo / "scripts" / "finetune_13b_zero3_offload.json").exists()


def test_a_copy_that_offloads_the_optimizer_and_the_parameters_holds_both(cli, tmp_path):
    # Sixteen gigabytes (no bf16 either): the plan adds two offloads at the top of the same ZeRO block.
    repo = _repo(tmp_path)
    code, out, err = cli.run(repo, "fix", "--unsafe-fixes", "--gpu", "t4", "--num-gpus", "8")
    assert code in (0, 1), err
    zero = json.loads((repo / "scripts" / "finetune_13b_zero3_offload.json").read_text())["zero_optimization"]
    assert (zero["stage"], zero["offload_optimizer"]["device"], zero["offload_param"]["device"]) == (3, "cpu", "cpu")


def test_a_port_refused_for_its_node_count_says_so_once(cli, tmp_path):
    # ShareGPT4V's two-node scripts: the node count is written on its own, and the config is shared as well.
    repo = _repo(tmp_path)
    launcher = repo / "scripts" / "finetune_13b.sh"
    two_nodes = "NNODES=2\ntorchrun --nnodes ${NNODES} --nproc_per_node 8 --node_rank ${NODE_RANK} train.py"
    launcher.write_text(launcher.read_text().replace("deepspeed train.py", two_nodes))
    code, out, err = cli.run(repo, "check", *PORT)
    suggestions = [line for line in out.splitlines() if "the launch spans 2 nodes" in line]
    assert suggestions and all(line.count("the launch spans 2 nodes") == 1 for line in suggestions), suggestions
    cli.run(repo, "fix", *PORT)
    assert not (repo / "scripts" / "finetune_13b_zero3_offload.json").exists()


def test_the_summary_says_when_the_repository_ignores_the_copy_it_made(cli, tmp_path):
    """LLaVA's .gitignore ignores `*.json`: a commit of the rewritten launchers would leave out the configs they now
    name, so the summary says so, with the command that adds them."""
    repo = _repo(tmp_path)
    (repo / ".gitignore").write_text("*.json\n")
    code, out, err = cli.run(repo, "fix", *PORT)
    copies = " ".join(f"scripts/{copy}" for copy in sorted(COPIES.values()))
    assert f"git add -f {copies}" in out
    assert "are ignored by the repository's .gitignore" in out


def test_the_summary_is_silent_about_a_copy_the_repository_keeps(cli, tmp_path):
    repo = _repo(tmp_path)
    (repo / ".gitignore").write_text("*.pyc\n__pycache__/\n")
    code, out, err = cli.run(repo, "fix", *PORT)
    assert "(new)" in out and "git add -f" not in out


def test_a_command_a_readme_shows_gets_a_copy_named_after_its_recipe(tmp_path):
    """axolotl's `examples/phi/README.md` runs `phi-ft.yml --deepspeed deepspeed_configs/zero1.json`: a copy named
    after the document (`README_zero1_offload.json`) would say nothing of the job it is for."""
    from trainlint.core import KnobChange, Setting, SourceKind, TrainingRun
    from trainlint.fixers.own_configs import own_config
    from trainlint.knobs import K

    config = tmp_path / "deepspeed_configs" / "zero1.json"
    config.parent.mkdir()
    config.write_text('{\n  "zero_optimization": {"stage": 1},\n  "bf16": {"enabled": "auto"}\n}\n')
    run = TrainingRun(id="examples/phi/README.md:6", path="examples/phi/README.md", launcher="axolotl", origin=None,
                      entry=None, settings={K.ZERO_STAGE: Setting(1, SourceKind.CONFIG_FILE)},
                      recipe="examples/phi/phi-ft.yml")

    def read(path: str):
        target = Path(path)
        return target.read_bytes() if target.is_file() else None

    copy = own_config(run, str(config), "deepspeed_configs/zero1.json",
                      (KnobChange(K.OFFLOAD_OPTIMIZER, "none", "cpu"),), read, lambda setting, new: None)
    assert copy.written == "deepspeed_configs/phi-ft_zero1_offload.json"
    assert json.loads(copy.creation.content)["zero_optimization"]["offload_optimizer"]["device"] == "cpu"
