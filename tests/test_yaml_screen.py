"""A YAML file whose text rules out a recipe key (and any part left unread) is not parsed, and the scan
says exactly what a full read would have made it say."""
from __future__ import annotations

import io
import random
from pathlib import Path

import pytest
from ruamel.yaml import YAML
from ruamel.yaml.nodes import MappingNode, SequenceNode

from tests.conftest import write_tree
from trainlint.linter import lint, make_target
from trainlint.readers import pool
from trainlint.readers.yaml import read_yaml_config
from trainlint.readers.yaml_screen import MAX_DEPTH, _nesting_bound
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
def test_a_yaml_file_nested_past_the_bound_is_reported_though_no_recipe(tmp_path, shape):
    write_tree(tmp_path, {"deep.yaml": shape(MAX_DEPTH + 5), "shallow.yaml": shape(MAX_DEPTH // 4)})
    result = _lint(tmp_path)
    reported = {f.path for f in result.findings if f.code == "TL002" and "not read to the end" in f.message}
    assert reported == {"deep.yaml"}


def test_a_recipe_key_spelt_with_an_escape_is_still_a_recipe(tmp_path):
    write_tree(tmp_path, {"escaped.yaml": 'model_name_or_path: org/llama-7b\n"per_device_train\\x5fbatch_size": 8\n'})
    assert [run.id for run in _lint(tmp_path).scan.runs] == ["escaped.yaml"]


def test_a_named_yaml_file_is_read_whatever_it_holds(tmp_path):
    write_tree(tmp_path, {"ci.yaml": "steps: [checkout, test\n"})
    result = lint([tmp_path / "ci.yaml"], make_target("a100-40gb"), workspace=Workspace(tmp_path), processes=1)
    assert [f.code for f in result.findings] == ["TL001"]


def test_one_or_many_processes_agree_and_workers_skip_plain_yaml(tmp_path, monkeypatch):
    monkeypatch.setattr(pool, "MIN_PARALLEL_FILES", 1)
    files = {f"ci/workflow{i}.yaml": PLAIN for i in range(6)}
    files.update({"recipes/sft.yaml": RECIPE, "deep.yaml": _nested_compact(MAX_DEPTH + 5), "bad.yaml": "a: [1\n"})
    write_tree(tmp_path, files)
    workspace = Workspace(tmp_path)
    parallel = _lint(tmp_path, processes=2, workspace=workspace)
    assert _summary(parallel) == _summary(_lint(tmp_path, processes=1))
    assert not any(workspace.has("yaml", tmp_path / "ci" / f"workflow{i}.yaml") for i in range(6))
    assert workspace.has("yaml", tmp_path / "recipes" / "sft.yaml")
    # Every file found is still stamped, read or not (a fix compares stamps before writing).
    assert all(workspace.resolved(tmp_path / name) in workspace.stamps for name in files)


def _random_data(rng: random.Random, level: int):
    if level > rng.randint(0, 30) or rng.random() < 0.15:
        return rng.choice([1, "x", None, 2.5])
    if rng.random() < 0.5:
        return [_random_data(rng, level + 1) for _ in range(rng.randint(1, 3))]
    return {f"k{index}": _random_data(rng, level + 1) for index in range(rng.randint(1, 3))}


def _depth(node) -> int:
    """How many collections the deepest node of a composed document sits in."""
    if isinstance(node, (MappingNode, SequenceNode)):
        children = [value for _, value in node.value] if isinstance(node, MappingNode) else node.value
        return 1 + max([_depth(child) for child in children] + [0])
    return 0


@pytest.mark.parametrize("seed", range(60))
def test_the_nesting_bound_is_never_below_the_real_nesting(seed):
    """Documents in every layout ruamel writes (block, flow, mixed; compact or indented sequences)."""
    rng = random.Random(seed)
    writer = YAML()
    writer.default_flow_style = rng.choice([False, None, True])
    offset = rng.randint(0, 2)
    writer.indent(mapping=rng.randint(2, 4), sequence=offset + rng.randint(2, 3), offset=offset)
    buffer = io.StringIO()
    writer.dump(_random_data(rng, 0), buffer)
    text = buffer.getvalue()
    assert _nesting_bound(text.encode()) >= _depth(YAML().compose(text))


def test_compact_and_indented_nesting_around_the_bound_is_counted():
    for depth in (1, 2, 3, MAX_DEPTH // 2 - 1, MAX_DEPTH // 2, MAX_DEPTH // 2 + 1, MAX_DEPTH, MAX_DEPTH + 1):
        for text in (_nested_block(depth), _nested_compact(depth), "a: " + "[" * depth + "]" * depth + "\n"):
            assert _nesting_bound(text.encode()) >= _depth(YAML().compose(text))
