"""Pull-request mode: the jobs a change can affect (by their dependency closure in the settings
graph), pre-commit's changed files, and baselines that survive line shifts."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import SAMPLES
from trainlint.changed import impacted_runs, scan_paths
from trainlint.resolution import scan

SAMPLE = SAMPLES / "ci_repo"
ZERO3_LAUNCHERS = ["scripts/full_zero3.sh:3", "scripts/long_context_zero3.sh:3"]
ZERO2_LAUNCHER = "scripts/eval_often_zero2.sh:3"

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull}
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def _pin_zero3(repo: Path, micro_batch: int = 16) -> None:
    path = repo / "scripts" / "zero3.json"
    text = path.read_text()
    path.write_text(text.replace('"train_micro_batch_size_per_gpu": "auto"',
                                 f'"train_micro_batch_size_per_gpu": {micro_batch}'))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """The sample repository with two commits on a branch: the base, then a PR that pins the
    micro-batch in scripts/zero3.json only."""
    root = tmp_path / "repo"
    shutil.copytree(SAMPLE, root)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "base")
    _git(root, "checkout", "-q", "-b", "pin-micro-batch")
    _pin_zero3(root)
    _git(root, "commit", "-q", "-a", "-m", "pin the ZeRO-3 micro-batch")
    return root


def _jobs(document) -> list:
    return sorted({f["run"] for f in document["findings"]})


def test_the_whole_repository_has_findings_in_three_jobs(repo, cli):
    code, document = cli.check_json(repo, ".")
    assert code == 1
    assert _jobs(document) == sorted(ZERO3_LAUNCHERS + [ZERO2_LAUNCHER])


def test_a_changed_deepspeed_config_reports_every_launcher_that_uses_it(repo, cli):
    code, document = cli.check_json(repo, "--diff-base", "main")
    assert code == 1
    assert _jobs(document) == ZERO3_LAUNCHERS
    # Each finding sits on the changed line of the config, with that job's numbers.
    assert {(f["code"], f["path"], f["line"]) for f in document["findings"]} == {("TL201", "scripts/zero3.json", 8)}
    assert sorted(f["message"] for f in document["findings"]) == [
        "train_micro_batch_size_per_gpu is 16 but per_device_train_batch_size is 2",
        "train_micro_batch_size_per_gpu is 16 but per_device_train_batch_size is 4",
    ]
    # The report's jobs are the affected ones only.
    assert sorted(run["id"] for run in document["runs"]) == ZERO3_LAUNCHERS


def test_uncommitted_and_untracked_changes_count_too(repo, cli):
    launcher = repo / "scripts" / "eval_often_zero2.sh"
    launcher.write_text(launcher.read_text().replace("--eval_steps 5000", "--eval_steps 4000"))
    _, document = cli.check_json(repo, "--diff-base", "main")
    assert _jobs(document) == sorted(ZERO3_LAUNCHERS + [ZERO2_LAUNCHER])


def test_no_relevant_change_reports_nothing(repo, cli):
    code, document = cli.check_json(repo, "--diff-base", "HEAD")
    assert code == 0 and document["findings"] == [] and document["runs"] == []


def test_an_unknown_base_is_a_usage_error(repo, cli):
    code, out, err = cli.run(repo, "check", "--diff-base", "origin/no-such-branch")
    assert code == 2 and "fetch-depth: 0" in err and out == ""


def test_pre_commit_passes_only_the_changed_config(repo, cli):
    # Run from a subfolder, as pre-commit would not; the repository is still found and scanned.
    code, document = cli.check_json(repo / "scripts", "--changed", "zero3.json")
    assert code == 1
    # Paths in the output are relative to the working directory.
    assert sorted(f["run"] for f in document["findings"]) == ["full_zero3.sh:3", "long_context_zero3.sh:3"]


def test_pre_commit_with_a_launcher_reports_only_its_job(repo, cli):
    _, document = cli.check_json(repo, "--changed", "scripts/eval_often_zero2.sh")
    assert [(f["code"], f["run"]) for f in document["findings"]] == [("TL103", ZERO2_LAUNCHER)]


def test_pre_commit_with_no_relevant_files_is_clean(repo, cli):
    assert cli.run(repo, "check", "--changed")[0] == 0
    assert cli.run(repo, "check", "--changed", "--diff-base", "main")[0] == 2


def test_a_changed_entry_script_affects_every_job_that_runs_it(repo, monkeypatch):
    monkeypatch.chdir(repo)
    found = scan([Path(".")])
    assert impacted_runs(found, [repo / "train.py"]) == set(ZERO3_LAUNCHERS + [ZERO2_LAUNCHER])
    assert impacted_runs(found, [repo / "scripts" / "zero2.json"]) == {ZERO2_LAUNCHER}
    assert impacted_runs(found, [repo / "README.md"]) == set()
    # A changed trainlint config can change any finding.
    assert impacted_runs(found, [repo / "pyproject.toml"]) == set(ZERO3_LAUNCHERS + [ZERO2_LAUNCHER])


def test_changed_files_the_walk_skips_are_named_explicitly(repo, monkeypatch):
    monkeypatch.chdir(repo)
    changed = [repo / "scripts" / "zero3.json", repo / "scripts" / "full_zero3.sh", repo / "notes.txt"]
    (repo / "notes.txt").write_text("not a config\n")
    assert scan_paths([Path(".")], changed) == [Path("."), Path("scripts/zero3.json")]


# --- baselines ---------------------------------------------------------------------------------

def test_a_baseline_hides_known_findings_across_line_shifts(repo, cli):
    code, _, err = cli.run(repo, "check", "--write-baseline", "trainlint-baseline.json")
    assert code == 0 and "wrote 3 findings" in err
    entries = json.loads((repo / "trainlint-baseline.json").read_text())["findings"]
    assert sorted(e["code"] for e in entries) == ["TL103", "TL201", "TL201"]

    # Lines added above every finding: same findings, new line numbers, nothing new.
    launcher = repo / "scripts" / "eval_often_zero2.sh"
    launcher.write_text(launcher.read_text().replace("#!/bin/bash\n", "#!/bin/bash\n# owner: eval team\n\n"))
    config = repo / "scripts" / "zero3.json"
    config.write_text(config.read_text().replace("{\n", '{\n  "steps_per_print": 50,\n', 1))
    code, document = cli.check_json(repo, ".", "--baseline", "trainlint-baseline.json")
    assert (code, document["findings"]) == (0, [])
    assert cli.check_json(repo, ".")[1]["findings"][0]["line"] == 9  # the shift is real

    # A new job on the same config is a new finding; the known ones stay hidden.
    launcher = repo / "scripts" / "full_zero3.sh"
    (repo / "scripts" / "full_zero3_8gpu.sh").write_text(launcher.read_text().replace("--num_gpus 4", "--num_gpus 8"))
    code, document = cli.check_json(repo, ".", "--baseline", "trainlint-baseline.json")
    assert code == 1
    assert [(f["code"], f["run"]) for f in document["findings"]] == [("TL201", "scripts/full_zero3_8gpu.sh:3")]


def test_a_missing_baseline_is_a_usage_error(repo, cli):
    code, _, err = cli.run(repo, "check", ".", "--baseline", "nope.json")
    assert code == 2 and "--write-baseline" in err
