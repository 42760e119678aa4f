"""Which paths below a scanned folder git ignores, with the rules of every .gitignore on the way down."""
from __future__ import annotations

from pathlib import Path

from tests.conftest import write_tree
from trainlint.gitignore import GitIgnore, ignored_paths

SUFFIXES = [".sh", ".yaml", ".yml"]


def _repository(root: Path) -> Path:
    (root / ".git").mkdir(parents=True)
    write_tree(root, {
        ".gitignore": "outputs/\n*.yaml\n!keep.yaml\n",
        "outputs/run.sh": "echo\n",
        "recipes/sft.yaml": "a: 1\n",
        "recipes/keep.yaml": "a: 1\n",
        "recipes/.gitignore": "!sft.yaml\nlocal/\n*.sh\n",
        "recipes/local/x.yaml": "a: 1\n",
        "recipes/train.sh": "echo\n",
        "scripts/train.sh": "echo\n",
        "scripts/notes.txt": "x\n",
        "scripts/deep/a/b/c.yaml": "a: 1\n",
    })
    return root


def test_each_folder_applies_its_own_rules_after_those_above(tmp_path, monkeypatch):
    root = _repository(tmp_path / "repo")
    monkeypatch.chdir(root)
    assert ignored_paths([Path(".")], SUFFIXES) == ["outputs", "recipes/local", "recipes/train.sh",
                                                    "scripts/deep/a/b/c.yaml"]


def test_paths_outside_the_working_directory_are_shown_as_walked(tmp_path, monkeypatch):
    root = _repository(tmp_path / "repo")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert ignored_paths([root / "scripts"], SUFFIXES) == [f"{root}/scripts/deep/a/b/c.yaml"]


def test_a_folder_that_is_the_working_directory_is_shown_as_dot(tmp_path, monkeypatch):
    root = _repository(tmp_path / "repo")
    monkeypatch.chdir(root / "outputs")
    assert ignored_paths([root], SUFFIXES)[0] == "."


def test_one_path_asked_directly_agrees_with_the_walk(tmp_path):
    root = _repository(tmp_path / "repo")
    rules = GitIgnore(root)
    assert rules.ignores(root / "recipes" / "local", is_dir=True)
    assert not rules.ignores(root / "recipes" / "sft.yaml")
    assert rules.ignores(root / "scripts" / "deep" / "a" / "b" / "c.yaml")
    assert not rules.ignores(root / "scripts" / "train.sh")
