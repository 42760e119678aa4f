"""[tool.trainlint] / trainlint.toml: discovery, validation, merging with the command line,
per-file ignores for JSON, fail-on, and `trainlint config`."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import write_tree
from trainlint.checks._examples import job
from trainlint.config import ConfigError, PerFileIgnore, fails, find_config, load_config, path_matches

# TL103 (warning) on finetune.sh:4 and TL201 (error) in ds.json, whose micro-batch disagrees.
PINNED = '{\n  "train_micro_batch_size_per_gpu": 16,\n  "gradient_accumulation_steps": "auto"\n}\n'
RISKY = job("--deepspeed configs/ds.json\n--per_device_train_batch_size 4\n--per_device_eval_batch_size 16\n"
            "--eval_strategy steps\n--eval_steps 5000\n--model_name_or_path acme-lab/chat-sft-base\n"
            "--model_max_length 512\n--bf16 True", eval_dataset="eval_set", extra={"configs/ds.json": PINNED})


def _codes(cli, folder: Path, *options: str):
    return cli.codes(folder, *options)


def test_the_risky_sample_fires_both_rules_without_config(tmp_path, cli):
    write_tree(tmp_path, RISKY)
    assert _codes(cli, tmp_path) == ["TL103", "TL201"]


def test_pyproject_settings_apply_and_the_command_line_overrides_them(tmp_path, cli):
    write_tree(tmp_path, {**RISKY, "pyproject.toml": '[project]\nname = "x"\n\n[tool.trainlint]\nignore = ["TL2"]\n'})
    assert _codes(cli, tmp_path) == ["TL103"]
    # --ignore adds to the configured ignores (as ruff's extend-ignore); --select replaces the selection.
    assert _codes(cli, tmp_path, "--ignore", "TL103") == []
    assert _codes(cli, tmp_path, "--extend-ignore", "TL103") == []
    assert _codes(cli, tmp_path, "--isolated") == ["TL103", "TL201"]


def test_trainlint_toml_wins_over_pyproject_and_is_found_from_a_subfolder(tmp_path, cli):
    write_tree(tmp_path, {
        **RISKY,
        "pyproject.toml": '[tool.trainlint]\nselect = ["TL2"]\n',
        "trainlint.toml": 'select = ["TL1"]\n',
    })
    assert find_config(tmp_path / "configs") == tmp_path / "trainlint.toml"
    assert _codes(cli, tmp_path) == ["TL103"]


def test_discovery_stops_at_the_repository_root(tmp_path):
    write_tree(tmp_path, {"pyproject.toml": '[tool.trainlint]\nignore = ["TL1"]\n', "repo/scripts/run.sh": ""})
    (tmp_path / "repo" / ".git").mkdir()
    assert find_config(tmp_path / "repo" / "scripts") is None
    # A pyproject.toml without the table is passed over.
    write_tree(tmp_path, {"repo/pyproject.toml": '[project]\nname = "x"\n'})
    assert find_config(tmp_path / "repo" / "scripts") is None


def test_json_files_are_silenced_through_per_file_ignores(tmp_path, cli):
    write_tree(tmp_path, {**RISKY, "trainlint.toml": '[per-file-ignores]\n"configs/*.json" = ["TL201"]\n'})
    assert _codes(cli, tmp_path) == ["TL103"]
    # Patterns are relative to the config's folder, also when trainlint runs from below it.
    assert _codes(cli, tmp_path / "configs", "..") == ["TL103"]


def test_fail_on_from_config_and_from_the_command_line(tmp_path, cli):
    write_tree(tmp_path, {**RISKY, "trainlint.toml": 'fail-on = "error"\nignore = ["TL201"]\n'})
    assert cli.run(tmp_path, "check", ".")[0] == 0  # only a warning is left
    assert cli.run(tmp_path, "check", ".", "--fail-on", "warning")[0] == 1
    assert cli.run(tmp_path, "check", ".", "--fail-on", "never", "--select", "TL")[0] == 0
    assert cli.run(tmp_path, "check", ".", "--fail-on", "info", "--select", "TL103")[0] == 1


def test_gpu_and_num_gpus_reach_the_target(tmp_path, cli):
    write_tree(tmp_path, {**RISKY, "trainlint.toml": 'gpu = "no-such-card"\n'})
    code, _, err = cli.run(tmp_path, "check", ".")
    assert code == 2 and "unknown GPU `no-such-card`" in err
    assert cli.run(tmp_path, "check", ".", "--gpu", "h100", "--exit-zero")[0] == 0


@pytest.mark.parametrize("text,problem", [
    ("select = [\"TL1\"\n", "is not valid TOML"),
    ("selcet = [\"TL1\"]\n", "unknown setting `selcet`"),
    ("ignore = [\"E501\"]\n", "`E501` is not a rule code"),
    ("num-gpus = 0\n", "`num-gpus` must be a whole number of at least 1"),
    ("fail-on = \"warnings\"\n", "`fail-on` must be one of error, warning, info, never"),
    ("exclude = 3\n[per-file-ignores]\n\"*.json\" = [\"TL2\"]\n", "`exclude` must be a list of strings"),
    ("[per-file-ignores]\n\"*.json\" = [\"TL2\", 5]\n", "must be a list of strings"),
])
def test_invalid_config_is_a_usage_error_naming_the_key(tmp_path, cli, text, problem):
    write_tree(tmp_path, {**RISKY, "trainlint.toml": text})
    with pytest.raises(ConfigError, match=problem.replace("[", r"\[")):
        load_config(tmp_path / "trainlint.toml")
    code, out, err = cli.run(tmp_path, "check", ".")
    assert code == 2 and problem in err and out == ""


def test_config_command_prints_values_and_their_sources(tmp_path, cli):
    write_tree(tmp_path, {"pyproject.toml": '[tool.trainlint]\ngpu = "a100-40gb"\nnum_gpus = 8\n'
                                            'exclude = ["legacy/"]\n[tool.trainlint.per-file-ignores]\n'
                                            '"configs/*.json" = ["TL201"]\n'})
    code, out, _ = cli.run(tmp_path, "config", "--gpu", "h100")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "# config file: pyproject.toml"
    assert any(line.startswith('gpu = "h100"') and line.endswith("# command line") for line in lines)
    assert any(line.startswith("num-gpus = 8") and line.endswith("# pyproject.toml [tool.trainlint]")
               for line in lines)
    assert any(line.startswith('exclude = ["legacy/"]') for line in lines)
    assert any(line.startswith('fail-on = "warning"') and line.endswith("# default") for line in lines)
    assert '"configs/*.json" = ["TL201"]' in lines


def test_exclude_from_config_skips_a_folder(tmp_path, cli):
    legacy = {f"legacy/{name}": text for name, text in RISKY.items()}
    write_tree(tmp_path, {**legacy, "trainlint.toml": 'exclude = ["legacy/"]\n'})
    assert _codes(cli, tmp_path) == []


def test_path_patterns(tmp_path):
    root = str(tmp_path)
    assert path_matches(str(tmp_path / "scripts" / "zero3.json"), "scripts/*.json", root)
    assert path_matches(str(tmp_path / "a" / "b" / "zero3.json"), "*.json", root)
    assert path_matches(str(tmp_path / "legacy" / "old" / "run.sh"), "legacy/", root)
    assert not path_matches(str(tmp_path / "scripts" / "run.sh"), "scripts/*.json", root)
    entry = PerFileIgnore("configs/*.json", ("TL2",), root)
    assert entry.ignores("TL201", str(tmp_path / "configs" / "ds.json"))
    assert not entry.ignores("TL101", str(tmp_path / "configs" / "ds.json"))


def test_fail_on_levels():
    severities = ["warning", "info"]
    assert fails(severities, "warning") and fails(severities, "info")
    assert not fails(severities, "error") and not fails(severities, "never")
    assert not fails([], "info")


def test_a_pyproject_without_a_trainlint_table_is_skipped_even_when_broken(tmp_path, cli):
    """A project's own pyproject.toml that never names trainlint holds none of its settings: the search goes on to
    the folders above (here, the repository's trainlint.toml), whatever that file holds."""
    write_tree(tmp_path, {**RISKY, ".git/HEAD": "ref: refs/heads/main\n", "trainlint.toml": "ignore = [\"TL103\"]\n",
                          "sub/pyproject.toml": "[project\nname = 'broken'\n"})
    code, out, err = cli.run(tmp_path / "sub", "config")
    assert code == 0, err
    assert out.splitlines()[0] == f"# config file: {tmp_path / 'trainlint.toml'}"
    write_tree(tmp_path, {"sub/pyproject.toml": "[tool.trainlint\nignore = []\n"})  # names trainlint: reported
    code, _, err = cli.run(tmp_path / "sub", "config")
    assert code == 2 and "is not valid TOML" in err
