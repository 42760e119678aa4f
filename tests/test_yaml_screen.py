"""A YAML file whose text rules out a recipe key (and any part left unread) is not parsed, and the scan
says exactly what a full read would have made it say."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import write_tree
from trainlint.linter import lint, make_target
from trainlint.readers import pool
from trainlint.readers.yaml import MAX_DEPTH, read_yaml_config
from trainlint.resolution.workspace import Workspace

RECIPE = "model_name_or_path: org/llama-7b\nper_device_train_batch_size: 8\ngradient_accumulation_steps: 2\n"
PLAIN = "name: demo\nsteps:\n  - uses: actions/checkout@v4\n  - run: pytest -q\nenv: {A: 1, B: [2, 3]}\n"


@pytest.fixture(autouse=True)
def _in_tree(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # paths are shown relative to where trainlint runs


def _lint(root: Path, processes: int = 1, workspace: Workspace = None):
    return lint([root], make_target("a100-40gb", num_gpus=8), workspace=workspace or Workspace(root),
                processes=processes)


def _summary(result):
    return sorted((f.code, f.path, f.message) for f in result.findings)


def _nested_block(depth: int) -> str:
    return "".join("  " * level + f"k{level}:\n" for level in range(depth)) + "  " * depth + "leaf\n"


def _nested_compact(depth: int) -> str:
    return "- " * depth + "leaf\n"


def test_a_plain_yaml_file_is_not_parsed_but_a_recipe_is(tmp_path, monkeypatch):
    write_tree(tmp_path, {"conf/site.yml": PLAIN, "docs/mkdocs.yml": PLAIN, "recipes/sft.yaml": RECIPE})
    parsed = []
    monkeypatch.setattr("trainlint.resolution.workspace._read_yaml_config",
                        lambda path: parsed.append(path.name) or read_yaml_config(path))
    result = _lint(tmp_path)
    assert parsed == ["sft.yaml"]
    assert [run.id for run in result.scan.runs] == ["recipes/sft.yaml"]


def test_a_broken_yaml_file_that_is_no_recipe_stays_silent_and_a_broken_recipe_is_reported(tmp_path):
    broken = "name: demo\nsteps: [a, b\n  c: {d\n"
    write_tree(tmp_path, {"ci.yaml": broken, "dup.yaml": "a: 1\na: 2\n",
                          "recipe.yaml": RECIPE + "per_device_train_batch_size: 4\nbad: [1, 2\n"})
    result = _lint(tmp_path)
    assert {f.path for f in result.findings if f.code in ("TL001", "TL003")} == {"recipe.yaml"}
    assert {f.code for f in result.findings if f.path == "recipe.yaml"} >= {"TL001", "TL003"}


@pytest.mark.parametrize("shape", [_nested_block, _nested_compact])
def test_a_yaml_file_nested_past_the_bound_is_read_only_when_it_may_be_a_recipe(tmp_path, shape, monkeypatch):
    """A lock file nested past the reader's bound holds no recipe key: it is not parsed (its size cost a
    scan of a real repository a second) and not reported. The same nesting under a recipe key is read,
    and what the bound left unread is reported."""
    deep = shape(MAX_DEPTH + 5)
    write_tree(tmp_path, {"pnpm-lock.yaml": deep, "recipe.yaml": "per_device_train_batch_size:\n" +
                          "".join("  " + line + "\n" for line in deep.splitlines())})
    parsed = []
    monkeypatch.setattr("trainlint.resolution.workspace._read_yaml_config",
                        lambda path: parsed.append(path.name) or read_yaml_config(path))
    result = _lint(tmp_path)
    assert parsed == ["recipe.yaml"]
    reported = {f.path for f in result.findings if f.code == "TL002" and "not read to the end" in f.message}
    assert reported == {"recipe.yaml"}


def test_a_recipe_key_spelt_with_an_escape_is_still_a_recipe(tmp_path):
    write_tree(tmp_path, {"escaped.yaml": 'model_name_or_path: org/llama-7b\n"per_device_train\\x5fbatch_size": 8\n'})
    assert [run.id for run in _lint(tmp_path).scan.runs] == ["escaped.yaml"]


def test_a_named_yaml_file_is_read_whatever_it_holds(tmp_path):
    write_tree(tmp_path, {"ci.yaml": "steps: [checkout, test\n"})
    result = lint([tmp_path / "ci.yaml"], make_target("a100-40gb"), workspace=Workspace(tmp_path), processes=1)
    assert [f.code for f in result.findings] == ["TL001"]


def test_one_or_many_processes_agree_and_workers_skip_plain_yaml(tmp_path, monkeypatch):
    monkeypatch.setattr(pool, "MIN_PARALLEL_WORK_MS", 0)
    files = {f"ci/workflow{i}.yaml": PLAIN for i in range(6)}
    files.update({"recipes/sft.yaml": RECIPE, "bad.yaml": "a: [1\n"})
    write_tree(tmp_path, files)
    workspace = Workspace(tmp_path)
    parallel = _lint(tmp_path, processes=2, workspace=workspace)
    assert _summary(parallel) == _summary(_lint(tmp_path, processes=1))
    assert not any(workspace.has("yaml", tmp_path / "ci" / f"workflow{i}.yaml") for i in range(6))
    assert workspace.has("yaml", tmp_path / "recipes" / "sft.yaml")
    # Every file found is still stamped, read or not (a fix compares stamps before writing).
    assert all(workspace.resolved(tmp_path / name) in workspace.stamps for name in files)
