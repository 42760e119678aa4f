"""A scan resolves each path through its folder's remembered resolution: the answer is always the one the full
resolution gives, through links to files and folders, `..` after a link, missing names, dangling links and loops."""
from __future__ import annotations

import os
import random
from pathlib import Path

from trainlint.inputs import safe_resolve as resolve_fully
from trainlint.readers.source import resolving_once, safe_resolve

NAMES = ["src", "train", "scripts", "train.py", "links", "to_train", "to_script", "loop_a", "dangling", "..", ".",
         "missing"]


def _tree(root: Path) -> None:
    (root / "src" / "train" / "scripts").mkdir(parents=True)
    (root / "links").mkdir()
    (root / "src" / "train" / "train.py").write_text("import transformers\n")
    os.symlink(root / "src" / "train", root / "links" / "to_train")  # a folder, by absolute path
    os.symlink("../src/train/train.py", root / "links" / "to_script")  # a file, relative
    os.symlink("loop_b", root / "links" / "loop_a")
    os.symlink("loop_a", root / "links" / "loop_b")
    os.symlink("nowhere", root / "links" / "dangling")


def test_a_path_resolves_as_the_full_resolution_resolves_it(tmp_path, monkeypatch):
    _tree(tmp_path)
    chooser = random.Random(7)
    absolute = [tmp_path.joinpath(*chooser.choices(NAMES, k=chooser.randint(1, 5))) for _ in range(1500)]
    monkeypatch.chdir(tmp_path / "src")
    relative = [Path(*chooser.choices(NAMES, k=chooser.randint(1, 4))) for _ in range(1000)]
    with resolving_once():
        for path in absolute + relative + [Path("."), Path(".."), Path("/")]:
            assert safe_resolve(path) == resolve_fully(path), path


def test_a_link_followed_then_left_by_dot_dot_leaves_from_its_target(tmp_path, monkeypatch):
    _tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    with resolving_once():
        assert safe_resolve(Path("links/to_train/../train/train.py")) == tmp_path / "src" / "train" / "train.py"
        assert safe_resolve(Path("links/to_script")) == tmp_path / "src" / "train" / "train.py"
        assert safe_resolve(Path("links/missing/file.json")) == tmp_path / "links" / "missing" / "file.json"
