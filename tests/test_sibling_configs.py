"""A port that needs another ZeRO stage or an offload, for a job whose DeepSpeed config other jobs share: the config
cannot be edited for that job alone, so the job's `--deepspeed` is pointed at a config beside it that holds the
planned settings and nothing else of the training changed (LLaVA's zero2.json, zero3.json, zero3_offload.json)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from trainlint.fixers.engine import plan_fixes
from trainlint.fixers.engine import rewrite as rewrite_plans
from trainlint.fixers.sibling_configs import sibling_config
from trainlint.linter import lint, make_target
from trainlint.memory import find_gpu
from trainlint.memory.plans import chosen_plan
from trainlint.readers.source import safe_resolve

SAMPLES = Path(__file__).parent / "samples" / "sibling_configs"
PORT = ("--gpu", "a100-40gb", "--num-gpus", "4")


def _repo(tmp_path):
    shutil.copytree(SAMPLES, tmp_path / "repo")
    return tmp_path / "repo"


def port(cli, repo: Path) -> str:
    """`fix` onto PORT: the shared zero2.json is left as it is, and no job overflows afterwards. The fix's output."""
    shared = (repo / "scripts" / "zero2.json").read_bytes()
    code, out, err = cli.run(repo, "fix", *PORT)
    assert code in (0, 1), err
    assert (repo / "scripts" / "zero2.json").read_bytes() == shared
    _, check, _ = cli.run(repo, "check", *PORT, "--output-format", "concise", "--select", "TL108")
    assert "TL108" not in check
    return out


def test_the_launch_is_pointed_at_the_sibling_that_holds_the_plan(cli, tmp_path):
    repo = _repo(tmp_path)
    port(cli, repo)
    for name in ("finetune_13b.sh", "finetune_13b_long.sh"):
        assert "    --deepspeed ./scripts/zero3_offload.json \\" in (repo / "scripts" / name).read_text().splitlines()


def test_the_fix_names_the_edit_it_makes_and_the_plan_behind_it(cli, tmp_path):
    code, out, err = cli.run(_repo(tmp_path), "check", *PORT)
    assert ("= fix (safe): deepspeed ./scripts/zero2.json → ./scripts/zero3_offload.json — port plan: ZeRO-2 -> "
            "ZeRO-3; optimizer states offloaded to CPU") in out


def _with_a_sibling_that_changes_more(tmp_path):
    repo = _repo(tmp_path)
    (repo / ".git").mkdir()  # the repository whose other launchers `fix scripts/finetune_13b.sh` looks through
    (repo / "scripts" / "zero3_offload.json").unlink()
    # zero3_fp32_optimizer.json shards as planned but brings its own optimizer: the training would change.
    (repo / "scripts" / "zero3_fp32_optimizer.json").write_text(
        (repo / "scripts" / "zero3_fp32_optimizer.json").read_text().replace(
            '"zero_optimization": {"stage": 3}',
            '"zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"}}'))
    return repo


def test_a_sibling_that_changes_more_than_zero_is_not_taken(cli, tmp_path):
    repo = _with_a_sibling_that_changes_more(tmp_path / "whole")
    cli.run(repo, "fix", *PORT)
    # each job gets a copy of zero2.json of its own instead (test_own_configs.py)
    for name in ("finetune_13b.sh", "finetune_13b_long.sh"):
        assert "zero3_fp32_optimizer.json" not in (repo / "scripts" / name).read_text()
    # With a file of the copy's name already there, the port is left to a person, who is told of the file that holds
    # the plan and of what else it would change.
    repo = _with_a_sibling_that_changes_more(tmp_path / "taken")
    (repo / "scripts" / "finetune_13b_zero3_offload.json").write_text("{}\n")
    before = (repo / "scripts" / "finetune_13b.sh").read_text()
    code, out, err = cli.run(repo, "fix", "scripts/finetune_13b.sh", *PORT)
    assert (repo / "scripts" / "finetune_13b.sh").read_text() == before
    assert "scripts/zero2.json is also named by scripts/finetune_13b_long.sh, which this check did not read" in out
    assert "(scripts/zero3_fp32_optimizer.json holds the plan, but also changes fp16, optimizer)" in out + err


def test_a_sibling_at_another_stage_is_not_taken(cli, tmp_path):
    repo = _repo(tmp_path)
    # Offloading the optimizer with ZeRO-2 only: not what the plan asks for (ZeRO-3).
    offload = repo / "scripts" / "zero3_offload.json"
    offload.write_text(offload.read_text().replace('"stage": 3,', '"stage": 2,'))
    cli.run(repo, "fix", *PORT)
    # not pointed there: the job gets a copy of zero2.json of its own at ZeRO-3 instead (test_own_configs.py)
    assert "--deepspeed ./scripts/finetune_13b_zero3_offload.json" in (repo / "scripts" / "finetune_13b.sh").read_text()


def test_a_sibling_with_which_the_job_would_not_fit_is_not_taken(monkeypatch):
    monkeypatch.chdir(SAMPLES)
    target = make_target(gpu="a100-40gb", num_gpus=4)
    run = next(run for run in lint([Path("scripts/finetune_13b.sh")], target).scan.runs)
    plan = chosen_plan(run, target.gpu, 4)
    assert plan.overrides == {"zero_stage": 3, "offload_optimizer": "cpu"}
    planned = dict(plan.overrides)
    assert sibling_config(run, planned, plan.overrides, target.gpu).found == Path("scripts/zero3_offload.json")
    # the same settings on a 16 GB card: the job would not fit with them, so no sibling is proposed
    assert sibling_config(run, planned, plan.overrides, find_gpu("t4")).found is None


def test_a_sibling_that_offloads_more_than_planned_is_taken_and_cpu_offload_true_is_the_cpu(tmp_path, monkeypatch):
    repo = _repo(tmp_path)
    offload = repo / "scripts" / "zero3_offload.json"
    # the optimizer in DeepSpeed's older spelling, the parameters offloaded too: more on the CPU than planned
    offload.write_text(offload.read_text().replace('"offload_optimizer": {"device": "cpu", "pin_memory": true},',
                                                   '"cpu_offload": true,\n        "offload_param": {"device": "cpu"},'))
    monkeypatch.chdir(repo)
    target = make_target(gpu="a100-40gb", num_gpus=4)
    run = next(run for run in lint([Path("scripts/finetune_13b.sh")], target).scan.runs)
    plan = chosen_plan(run, target.gpu, 4)
    found = sibling_config(run, dict(plan.overrides), plan.overrides, target.gpu).found
    assert found == Path("scripts/zero3_offload.json")
    # an NVMe offload needs a path on the machine: not proposed
    offload.write_text(offload.read_text().replace('"offload_param": {"device": "cpu"}',
                                                   '"offload_param": {"device": "nvme"}'))
    assert sibling_config(run, dict(plan.overrides), plan.overrides, target.gpu).found is None


def test_a_sibling_at_another_stage_than_the_jobs_own_is_not_taken_when_the_plan_keeps_the_stage(tmp_path, monkeypatch):
    repo = _repo(tmp_path)
    # The job already shards at ZeRO-3 in a shared config; the plan only adds the optimizer offload.
    for name in ("finetune_13b.sh", "finetune_13b_long.sh"):
        launcher = repo / "scripts" / name
        launcher.write_text(launcher.read_text().replace("zero2.json", "zero3.json"))
    zero2 = repo / "scripts" / "zero2.json"
    offload = '"stage": 2,\n        "offload_optimizer": {"device": "cpu"},'
    zero2.write_text(zero2.read_text().replace('"stage": 2,', offload))
    (repo / "scripts" / "zero3_offload.json").unlink()
    monkeypatch.chdir(repo)
    target = make_target(gpu="a100-80gb", num_gpus=8)
    run = next(run for run in lint([Path("scripts/finetune_13b_long.sh")], target).scan.runs)
    # zero2.json offloads as planned, and the job would even fit an 80 GB card with it, but at ZeRO-2: pointing the
    # job there would unshard its weights, which the plan never asked for
    assert sibling_config(run, {"offload_optimizer": "cpu"}, {"offload_optimizer": "cpu"}, target.gpu).found is None


def test_a_config_an_earlier_round_of_the_fix_rewrote_is_no_sibling(monkeypatch):
    # What such a file holds now was planned for other jobs (Qwen3-VL: a zero2.json ported to ZeRO-3 for its one job).
    monkeypatch.chdir(SAMPLES)
    result = lint([Path("scripts")], make_target(gpu="a100-40gb", num_gpus=4))
    fresh = [plan for plan in plan_fixes(result, unsafe=False) if plan.code == "TL108"]
    assert len(fresh) == 2 and all(plan.edits for plan in fresh)
    rewritten = frozenset({safe_resolve(Path("scripts/zero3_offload.json"))})
    later = [plan for plan in plan_fixes(result, unsafe=False, edited=rewritten) if plan.code == "TL108"]
    # each job gets a copy of zero2.json of its own instead (test_own_configs.py)
    assert len(later) == 2 and all(plan.edits for plan in later)
    assert "./scripts/zero3_offload.json" not in [edit.content for plan in later for edit in plan.edits]
    assert sorted(edit.origin.path for plan in later for edit in plan.edits if edit.creates) == \
        ["scripts/finetune_13b_long_zero3_offload.json", "scripts/finetune_13b_zero3_offload.json"]


def test_a_path_built_from_variables_is_not_written_out_whole(tmp_path, monkeypatch):
    repo = _repo(tmp_path)
    launcher = repo / "scripts" / "finetune_13b.sh"
    text = launcher.read_text().replace("deepspeed train.py", "DS_DIR=${DS_DIR:-./scripts}\ndeepspeed train.py")
    launcher.write_text(text.replace("--deepspeed ./scripts/zero2.json", "--deepspeed ${DS_DIR}/zero2.json"))
    monkeypatch.chdir(repo)
    result = lint([Path("scripts")], make_target(gpu="a100-40gb", num_gpus=4))
    plans = {plan.finding.path: plan for plan in plan_fixes(result, unsafe=False) if plan.code == "TL108"}
    # `--deepspeed ./scripts/zero3_offload.json` would stop following $DS_DIR: only the file name changes
    assert [edit.content for edit in plans["scripts/finetune_13b.sh"].edits] == ["zero3_offload.json"]
    assert [edit.content for edit in plans["scripts/finetune_13b_long.sh"].edits] == ["./scripts/zero3_offload.json"]
    rewrite = rewrite_plans([plans["scripts/finetune_13b.sh"]])
    assert b"--deepspeed ${DS_DIR}/zero3_offload.json \\\n" in rewrite.contents[Path("scripts/finetune_13b.sh")]
    # A word that does not end in the file name cannot be narrowed: left to a person.
    text = text.replace("DS_DIR=${DS_DIR:-./scripts}", "ZERO=zero2")
    launcher.write_text(text.replace("--deepspeed ./scripts/zero2.json", "--deepspeed ./scripts/${ZERO}.json"))
    result = lint([Path("scripts")], make_target(gpu="a100-40gb", num_gpus=4))
    plans = {plan.finding.path: plan for plan in plan_fixes(result, unsafe=False) if plan.code == "TL108"}
    assert not plans["scripts/finetune_13b.sh"].edits


def test_a_copy_made_for_one_stage_is_the_sibling_of_the_next_stage_that_needs_the_same(cli, tmp_path):
    # Two stages of one launcher read configs that other launchers share and that differ only in their offload;
    # onto 8 x V100 both need ZeRO-3 with the optimizer offloaded. The first stage gets a copy named after the
    # launcher; the second is pointed at that copy in the same fix, as a second `fix` would do, instead of being
    # left for a person because the copy's name is taken.
    repo = tmp_path / "repo"
    shutil.copytree(Path(__file__).parent / "samples" / "own_config_two_stages", repo)
    shutil.copy(SAMPLES / "train.py", repo / "train.py")  # the same HF entry script
    v100 = ("--gpu", "v100-32gb", "--num-gpus", "8", "--isolated")
    code, out, err = cli.run(repo, "fix", *v100)
    assert code in (0, 1), err
    assert "Left for a human" not in out
    launcher = (repo / "scripts" / "stage_1_2_full_13b.sh").read_text().splitlines()
    assert launcher.count("    --deepspeed ./scripts/stage_1_2_full_13b_zero3_offload.json \\") == 2
    copy = json.loads((repo / "scripts" / "stage_1_2_full_13b_zero3_offload.json").read_text())
    assert copy["zero_optimization"]["stage"] == 3
    assert copy["zero_optimization"]["offload_optimizer"]["device"] == "cpu"
    _, again, notes = cli.run(repo, "fix", "--diff", *v100)
    assert again == "" and "No fixes would be applied." in notes
