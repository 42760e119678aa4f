"""trainlint.api as a program uses it: typed results and exit codes, the same answers as the command
line, usage errors as exceptions."""
from __future__ import annotations

import ast
import json
import shutil
import stat
from pathlib import Path

import pytest

from tests.conftest import write_tree
from trainlint import api
from trainlint.api import ExitCode, UsageError
from trainlint.atomic_write import write_text_atomically
from trainlint.checks import rule_by_code
from trainlint.report import render

LINTER = Path(__file__).parent.parent / "trainlint" / "linter.py"


@pytest.fixture
def too_large(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """TL101's first example: a 7B full fine-tune with micro-batch 16 on eight 40 GB cards."""
    example = rule_by_code("TL101").examples[0]
    write_tree(tmp_path, example.files)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_exit_codes_are_the_documented_numbers() -> None:
    assert [int(code) for code in (ExitCode.CLEAN, ExitCode.FINDINGS, ExitCode.ERROR)] == [0, 1, 2]


def test_lint_returns_typed_findings_and_the_exit_code(too_large: Path) -> None:
    result = api.lint(["."], api.load_settings(["."], gpu="a100-40gb"))
    assert [finding.code for finding in result.findings] == ["TL101"]
    [run] = result.runs
    assert result.effective_batches[run.id] == 16 * 1 * 8
    assert not result.estimates[run.id].fits
    assert result.exit_code is ExitCode.FINDINGS
    # The fix carries its planned edits, as `check` shows them.
    assert result.findings[0].fix.edits
    quiet = api.lint(["."], api.load_settings(["."], gpu="a100-40gb", fail_on="never"))
    assert quiet.findings == result.findings and quiet.exit_code is ExitCode.CLEAN
    assert api.lint(["."], api.load_settings(["."], gpu="h100", ignore=["TL101"])).exit_code is ExitCode.CLEAN


def test_the_command_line_prints_what_the_api_returns(too_large: Path, cli) -> None:
    code, out, _ = cli.run(too_large, "check", ".", "--gpu", "a100-40gb", "--output-format", "json")
    result = api.lint(["."], api.load_settings(["."], gpu="a100-40gb"))
    assert code == result.exit_code
    assert out == render(result.report, "json")


def test_settings_come_from_the_project_config_unless_isolated(too_large: Path) -> None:
    (too_large / "trainlint.toml").write_text('gpu = "h100"\nignore = ["TL1"]\n', encoding="utf-8")
    assert api.load_settings(["."]).gpu == "h100"
    assert api.lint(["."]).findings == ()
    assert api.load_settings(["."], isolated=True).gpu is None
    assert api.load_settings(["."], gpu="a100-40gb").gpu == "a100-40gb"


def test_requests_that_cannot_be_carried_out_raise_usage_errors(too_large: Path) -> None:
    with pytest.raises(UsageError, match="unknown GPU `no-such-card`"):
        api.lint(["."], api.load_settings(["."], gpu="no-such-card"))
    with pytest.raises(UsageError, match="at least 1"):
        api.estimate(["."], api.load_settings(["."], num_gpus=0))
    with pytest.raises(UsageError, match="does not exist"):
        api.lint(["."], api.load_settings(["."]), baseline=too_large / "missing.json")
    with pytest.raises(UsageError, match="exclusive"):
        api.lint(["finetune.sh"], api.load_settings(["."]), changed=True, diff_base="main")
    (too_large / "trainlint.toml").write_text('gpu = 3\n', encoding="utf-8")
    with pytest.raises(UsageError, match="must be a GPU name"):
        api.load_settings(["."])


def test_a_baseline_accepts_the_findings_it_holds(too_large: Path) -> None:
    settings = api.load_settings(["."], gpu="a100-40gb")
    first = api.lint(["."], settings)
    assert api.write_baseline(too_large / "ci" / "baseline.json", first.findings) == 1
    again = api.lint(["."], settings, baseline=too_large / "ci" / "baseline.json")
    assert again.findings == () and [f.code for f in again.baselined] == ["TL101"]
    assert again.exit_code is ExitCode.CLEAN


def test_fix_previews_then_applies(too_large: Path) -> None:
    settings = api.load_settings(["."], gpu="a100-40gb")
    before = (too_large / "finetune.sh").read_text(encoding="utf-8")
    preview = api.fix(["."], settings, preserve_effective_batch=True, preview=True)
    assert "-    --per_device_train_batch_size 16" in preview.diff
    assert preview.exit_code is ExitCode.FINDINGS  # there are edits to make
    assert (too_large / "finetune.sh").read_text(encoding="utf-8") == before
    done = api.fix(["."], settings, preserve_effective_batch=True)
    assert done.error is None and done.outcome.files_changed == ["finetune.sh"]
    assert done.remaining == () and done.exit_code is ExitCode.CLEAN
    [run] = api.lint(["."], settings).runs
    assert api.lint(["."], settings).effective_batches[run.id] == 128  # the optimizer sees the same batch


def test_estimate_names_the_gpu_it_assumed_and_what_would_fit(too_large: Path) -> None:
    assumed = api.estimate(["."], api.load_settings(["."]))
    assert assumed.gpu_assumed and assumed.gpu.name == "NVIDIA A100 80GB"
    assert assumed.suggestions == {}
    small = api.estimate(["."], api.load_settings(["."], gpu="a100-40gb"), with_suggestions=True)
    [run] = small.runs
    assert not small.gpu_assumed and not small.estimates[run.id].fits
    assert any(suggestion.estimate.fits for suggestion in small.suggestions[run.id])
    assert json.loads(render(small.report, "json"))["runs"][0]["effective_batch"] == 128


def test_the_linter_holds_no_command_line_concern() -> None:
    tree = ast.parse(LINTER.read_text(encoding="utf-8"))
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert not imported & {"argparse", "sys", "trainlint.api", "trainlint.commands", "trainlint.cli"}
    calls = {node.func.id for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    assert not calls & {"print", "exit"}


def test_report_files_are_written_atomically_in_new_folders(tmp_path: Path) -> None:
    target = tmp_path / "out" / "reports" / "trainlint.json"
    write_text_atomically(target, "{}\n")
    target.chmod(0o640)
    write_text_atomically(target, '{"version": "0.1.0"}\n')
    assert target.read_text(encoding="utf-8") == '{"version": "0.1.0"}\n'
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert [p.name for p in target.parent.iterdir()] == ["trainlint.json"]  # no temp file left


def test_planning_a_checks_fixes_works_out_no_estimate_the_scan_made(tmp_path: Path, monkeypatch) -> None:
    # A port fix plans against the estimates the rules worked out for the same job, GPU and changes.
    from trainlint.memory import assembly

    folder = tmp_path / "job"
    shutil.copytree(Path(__file__).parent / "samples" / "python" / "ds_chat_style", folder)
    (folder / "run.sh").write_text("#!/bin/bash\ndeepspeed --num_gpus 1 sft.py --model_name_or_path facebook/opt-1.3b "
                                   "--max_seq_len 512 --zero_stage 0 --deepspeed --output_dir ./out\n")
    worked_out = []
    original = assembly._estimate

    def counted(run, gpu, overrides):
        worked_out.append((run.id, gpu.key, tuple(sorted((overrides or {}).items()))))
        return original(run, gpu, overrides)

    monkeypatch.setattr(assembly, "_estimate", counted)
    result = api.lint([folder], api.load_settings([folder], gpu="rtx4090", num_gpus=2))
    assert any(finding.fix is not None and finding.fix.edits for finding in result.findings)
    assert worked_out and len(worked_out) == len(set(worked_out))
