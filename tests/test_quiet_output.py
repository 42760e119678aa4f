"""What the terminal says once per scan (the unknowns), what it leaves out by default (info
findings), where every reader diagnostic goes, and the command line next to ruff's."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import SAMPLES, write_tree
from trainlint.checks import all_rules
from trainlint.checks._examples import job
from trainlint.cli import build_parser, main
from trainlint.core import DiagnosticKind
from trainlint.linter import CHANNEL_OF_KIND

SMALL = "--per_device_train_batch_size 1\n--model_name_or_path Qwen/Qwen2-0.5B\n--bf16 True"
BARE = {f"scripts/run{n}.sh": job(SMALL, launcher="deepspeed")["finetune.sh"] for n in range(3)}
BARE["train.py"] = job("")["train.py"]
DS_COMMENT = '{\n  // ZeRO-2\n  "zero_optimization": {"stage": 2},\n}\n'


# --- the unknown world size ---------------------------------------------------------------------

def test_an_unknown_world_size_is_one_line_per_scan_not_a_finding_per_job(tmp_path, cli):
    write_tree(tmp_path, BARE)
    code, out, _ = cli.run(tmp_path, "check", ".")
    assert code == 0
    assert "info[TL301]" not in out and "-->" not in out
    assert out.count("Unknown in 3 jobs") == 1 and "--num-gpus N" in out and "num-gpus = N" in out
    _, listed, _ = cli.run(tmp_path, "check", ".", "--show-info")
    assert listed.count("info[TL301]") == 3
    _, selected, _ = cli.run(tmp_path, "check", ".", "--select", "TL301", "--output-format", "concise")
    assert selected.count("TL301 [info]") == 3
    # JSON keeps the structured findings.
    assert cli.codes(tmp_path, ".") == ["TL301"] * 3


@pytest.mark.parametrize("answer", [("--num-gpus", "8"), ("--config", "trainlint.toml")])
def test_once_the_world_size_is_answered_nothing_is_said(tmp_path, cli, answer):
    write_tree(tmp_path, {**BARE, "trainlint.toml": "num-gpus = 8\n"})
    _, out, _ = cli.run(tmp_path, "check", ".", *answer)
    assert "Unknown" not in out and "TL301" not in out
    assert cli.codes(tmp_path, ".", *answer) == []


def test_a_folder_without_jobs_warns_instead_of_saying_no_problems(tmp_path, cli):
    (tmp_path / "README.md").write_text("hello\n")
    code, out, _ = cli.run(tmp_path, "check", ".")
    assert code == 0 and out.startswith("warning: no training job found") and "No problems found" not in out


# --- every diagnostic has an owner --------------------------------------------------------------

def test_every_diagnostic_kind_has_exactly_one_owner():
    owners = {kind: [] for kind in DiagnosticKind}
    for rule in all_rules():
        for kind in rule.diagnostic_kinds:
            owners[DiagnosticKind(kind)].append(rule.code)
    for kind, channel in CHANNEL_OF_KIND.items():
        owners[kind].append(channel.value)
    assert {kind: found for kind, found in owners.items() if len(found) != 1} == {}


def test_a_json_config_with_comments_is_an_error_and_a_json_comment_suppresses_it(tmp_path, cli):
    files = job("--deepspeed ds.json\n--per_device_train_batch_size 1", extra={"ds.json": DS_COMMENT})
    write_tree(tmp_path, files)
    code, document = cli.check_json(tmp_path, ".")
    assert code == 1
    [finding] = [f for f in document["findings"] if f["code"] == "TL001"]
    assert finding["severity"] == "error" and finding["path"] == "ds.json" and "json.load" not in finding["message"]
    assert "strict JSON loader" in finding["message"]
    (tmp_path / "ds.json").write_text("// trainlint: ignore-file[TL001] -- loaded with commentjson\n" + DS_COMMENT)
    assert "TL001" not in cli.codes(tmp_path, ".")


def test_duplicate_keys_are_errors_in_json_and_warnings_in_yaml(tmp_path, cli):
    duplicated = '{\n  "zero_optimization": {"stage": 3},\n  "zero_optimization": {"stage": 2}\n}\n'
    write_tree(tmp_path, job("--deepspeed ds.json\n--per_device_train_batch_size 1", extra={"ds.json": duplicated}))
    _, document = cli.check_json(tmp_path, ".", "--select", "TL003")
    assert [(f["code"], f["severity"], f["line"]) for f in document["findings"]] == [("TL003", "error", 3)]
    recipe = ("model_name_or_path: Qwen/Qwen2-0.5B\nstage: sft\ndo_train: true\nfinetuning_type: lora\n"
              "per_device_train_batch_size: 1\nper_device_train_batch_size: 2\nbf16: true\n")
    (tmp_path / "recipe.yaml").write_text(recipe)
    _, document = cli.check_json(tmp_path, "recipe.yaml", "--num-gpus", "1")
    assert [(f["code"], f["severity"]) for f in document["findings"] if f["code"] == "TL003"] == [
        ("TL003", "warning")]


def test_an_internal_error_of_a_reader_exits_2_with_its_message(tmp_path, cli, monkeypatch):
    from trainlint import linter
    from trainlint.core import Diagnostic

    write_tree(tmp_path, job("--per_device_train_batch_size 1"))
    real_scan = linter.scan

    def failing_scan(*args, **kwargs):
        found = real_scan(*args, **kwargs)
        found.diagnostics.append(Diagnostic(DiagnosticKind.INTERNAL_ERROR, "the reader broke", "finetune.sh"))
        return found

    monkeypatch.setattr(linter, "scan", failing_scan)
    code, _, err = cli.run(tmp_path, "check", ".")
    assert code == 2 and "internal error: finetune.sh: the reader broke" in err


def test_what_could_not_be_read_reaches_every_format(tmp_path, cli):
    files = job("--per_device_train_batch_size ${!NAME}")
    write_tree(tmp_path, files)
    _, document = cli.check_json(tmp_path, ".")
    unread = [(u["kind"], u["path"], u["line"]) for u in document["unread"]]
    assert unread == [("unmodelled-construct", "finetune.sh", 3)]
    for fmt in ("full", "concise"):
        _, out, _ = cli.run(tmp_path, "check", ".", "--output-format", fmt)
        assert "Could not read statically (1)" in out and "indirect expansion `${!NAME}`" in out
    _, out, _ = cli.run(tmp_path, "check", ".", "--output-format", "github")
    assert "::notice file=finetune.sh,line=3" in out
    _, sarif, _ = cli.run(tmp_path, "check", ".", "--output-format", "sarif")
    notes = json.loads(sarif)["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert "indirect expansion" in notes[0]["message"]["text"]


# --- hostile file names and contents ------------------------------------------------------------

def test_escape_sequences_from_files_are_shown_not_obeyed(tmp_path, cli):
    files = job("--per_device_train_batch_size 1")
    files["finetune.sh"] = files["finetune.sh"].replace("train.py", "train.py --run_name \x1b[2J\x1b]0;pwned\x07")
    files["finetune.sh"] += "deepspeed --num_gpus 1 \x1b[31mmissing.py --per_device_train_batch_size 1\n"
    write_tree(tmp_path, files)
    for fmt in ("full", "concise", "github"):
        _, out, _ = cli.run(tmp_path, "check", ".", "--output-format", fmt, "--show-info")
        assert "\x1b" not in out and "\x07" not in out, fmt


@pytest.mark.skipif(os.name == "nt", reason="POSIX file names are bytes")
def test_file_names_that_are_not_utf8_do_not_crash_any_format(tmp_path, cli):
    folder = os.fsencode(tmp_path / "scripts")
    os.makedirs(folder)
    with open(os.path.join(folder, b"run-\xff.sh"), "w") as handle:
        handle.write(job("--per_device_train_batch_size 1", launcher="deepspeed")["finetune.sh"])
    (tmp_path / "train.py").write_text(job("")["train.py"])
    for fmt in ("full", "concise", "json", "github", "sarif"):
        code, out, err = cli.run(tmp_path, "check", ".", "--output-format", fmt, "--show-info")
        assert code in (0, 1) and "internal error" not in err, (fmt, err)
        if fmt in ("json", "sarif"):
            json.loads(out)


# --- the command line ---------------------------------------------------------------------------

def test_a_mistyped_option_or_command_gets_a_suggestion(capsys):
    with pytest.raises(SystemExit):
        main(["check", "--num-gpsu", "8"])
    assert "did you mean `--num-gpus`?" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["chek", "."])
    assert "did you mean `check`?" in capsys.readouterr().err


def test_an_option_of_another_command_names_that_command(capsys):
    with pytest.raises(SystemExit):
        main(["show", ".", "--no-cache"])
    err = capsys.readouterr().err
    assert "it is an option of `trainlint check`" in err and "did you mean" not in err


def test_select_all_extend_select_and_statistics(tmp_path, cli):
    write_tree(tmp_path, BARE)
    assert cli.codes(tmp_path, ".", "--select", "ALL") == ["TL301"] * 3
    assert cli.codes(tmp_path, ".", "--select", "TL1", "--extend-select", "TL3") == ["TL301"] * 3
    assert cli.codes(tmp_path, ".", "--select", "TL1") == []
    code, out, _ = cli.run(tmp_path, "check", ".", "--statistics")
    assert out.split() == ["3", "TL301", "world-size-unknown"]


def test_quiet_prints_findings_without_notes_or_summary(tmp_path, cli):
    write_tree(tmp_path, BARE)
    _, out, _ = cli.run(tmp_path, "check", ".", "-q")
    assert out.strip() == ""
    _, out, _ = cli.run(tmp_path, "check", ".", "-q", "--show-info", "--output-format", "concise")
    assert out.count("TL301") == 3 and "Found" not in out


def test_gitignored_folders_are_skipped_unless_asked(tmp_path, cli):
    write_tree(tmp_path, {**BARE, ".gitignore": "vendor/\n", "vendor/other/run.sh": BARE["scripts/run0.sh"]})
    (tmp_path / ".git").mkdir()
    assert len(cli.codes(tmp_path, ".")) == 3
    assert len(cli.codes(tmp_path, ".", "--no-respect-gitignore")) == 4


def test_the_fix_hint_names_the_command_that_applies_the_fixes(tmp_path, cli):
    write_tree(tmp_path, job("--per_device_train_batch_size 32\n--gradient_accumulation_steps 1\n"
                             "--model_max_length 2048\n--bf16 True"))
    _, out, _ = cli.run(tmp_path, "check", ".", "--gpu", "a100-40gb", "--preserve-effective-batch")
    assert "`trainlint fix --gpu a100-40gb --preserve-effective-batch .`" in out
    _, fixed, _ = cli.run(tmp_path, "fix", "--gpu", "a100-40gb", "--preserve-effective-batch", ".", "--diff")
    assert "No fixes to apply" not in fixed


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_scripts_know_every_command(capsys, shell):
    assert main(["completion", shell]) == 0
    script = capsys.readouterr().out
    for command in ("check", "fix", "show", "estimate", "completion"):
        assert command in script
    assert "--num-gpus" in script or "num-gpus" in script
    if shell == "bash" and shutil.which("bash"):
        subprocess.run(["bash", "-n"], input=script, text=True, check=True)


def test_color_follows_the_option_and_no_color(tmp_path, cli, monkeypatch):
    write_tree(tmp_path, job("--per_device_train_batch_size 64", launcher="deepspeed --num_gpus 1"))
    _, out, _ = cli.run(tmp_path, "check", ".", "--color", "always")
    assert "\x1b[" in out
    _, out, _ = cli.run(tmp_path, "check", ".", "--color", "never")
    assert "\x1b[" not in out
    monkeypatch.setenv("FORCE_COLOR", "1")
    _, out, _ = cli.run(tmp_path, "check", ".")
    assert "\x1b[" in out
    monkeypatch.setenv("NO_COLOR", "1")
    _, out, _ = cli.run(tmp_path, "check", ".")
    assert "\x1b[" not in out


def test_show_and_estimate_do_not_wrap_when_piped(tmp_path, cli):
    long_model = "an-organisation-with-a-long-name/" + "a-model-whose-name-is-long-" * 5 + "7b"
    write_tree(tmp_path, job(f"--per_device_train_batch_size 1\n--model_name_or_path {long_model}"))
    _, out, _ = cli.run(tmp_path, "show", ".")
    assert long_model in out and "…" not in out


# --- pull requests --------------------------------------------------------------------------------

def _git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull}
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


@pytest.fixture
def zero_stage_pr(tmp_path: Path) -> Path:
    """The sample repository, then a PR that only changes `"stage": 3` to `2` in scripts/zero3.json."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    root = tmp_path / "repo"
    shutil.copytree(SAMPLES / "ci_repo", root)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "base")
    _git(root, "checkout", "-q", "-b", "zero2")
    config = root / "scripts" / "zero3.json"
    config.write_text(config.read_text().replace('"stage": 3', '"stage": 2'))
    _git(root, "commit", "-q", "-a", "-m", "ZeRO-2")
    return root


def test_a_pr_changing_the_zero_stage_is_reported_on_that_key(zero_stage_pr, cli):
    code, document = cli.check_json(zero_stage_pr, "--diff-base", "main", "--gpu", "v100-16gb")
    assert code == 1
    memory = [f for f in document["findings"] if f["code"] == "TL101"]
    assert len(memory) == 2
    for finding in memory:
        assert (finding["path"], finding["line"]) == ("scripts/zero3.json", 4)
        assert "`zero_optimization.stage` is now `2` in scripts/zero3.json" in finding["message"]
        assert any(r["path"].endswith("_zero3.sh") for r in finding["related"])
    # Every other finding is on a changed line, or says why it is not.
    for finding in document["findings"]:
        assert (finding["path"], finding["line"]) == ("scripts/zero3.json", 4) or "unchanged line" in finding["message"]


def test_a_pr_that_touches_no_job_says_so(zero_stage_pr, cli):
    (zero_stage_pr / "README.md").write_text("notes\n")
    _git(zero_stage_pr, "add", "README.md")
    _git(zero_stage_pr, "commit", "-q", "-m", "docs")
    code, out, _ = cli.run(zero_stage_pr, "check", "--diff-base", "HEAD~1")
    assert code == 0 and out.startswith("No job reads a changed file")


def test_a_changed_entry_script_is_not_a_job_of_its_own(zero_stage_pr, cli):
    entry = zero_stage_pr / "train.py"
    if not entry.exists():
        pytest.skip("the sample has no entry script at the root")
    _, document = cli.check_json(zero_stage_pr, "--changed", "train.py")
    assert all(not run["id"].startswith("train.py") for run in document["runs"])


def test_the_step_summary_escapes_markdown_in_paths(tmp_path, cli):
    name = "evil\n# Heading [link](http://x).sh"
    files = job("--per_device_train_batch_size 1")
    write_tree(tmp_path, {"train.py": files["train.py"], name: files["finetune.sh"]})
    cli.run(tmp_path, "check", ".", "--summary-file", "summary.md")
    summary = (tmp_path / "summary.md").read_text()
    assert "\n# Heading" not in summary and "](http://x)" not in summary
    assert summary.index("| Job |") < summary.index("<details>")


def test_the_step_summary_never_says_does_not_fit_for_a_job_without_findings(tmp_path, cli):
    write_tree(tmp_path, job("--per_device_train_batch_size 64\n--model_max_length 4096"))
    _, document = cli.check_json(tmp_path, ".", "--gpu", "v100-16gb")
    assert document["runs"][0]["memory"]["peak_gib"] > document["runs"][0]["memory"]["capacity_gib"]
    cli.run(tmp_path, "check", ".", "--gpu", "v100-16gb", "--ignore", "TL", "--summary-file", "summary.md")
    summary = (tmp_path / "summary.md").read_text()
    assert "does not fit" not in summary and "✅ no finding" in summary


def test_parser_builds_for_completion():
    assert build_parser().prog == "trainlint"
