from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, List

import pytest

from trainlint.api import CACHE_DIR_VARIABLE
from trainlint.cli import main

SAMPLES = Path(__file__).parent / "samples"
# The bundled example is the first story's job; the tests use it as it ships.
MOE_LLAVA = Path(__file__).parent.parent / "examples" / "moe-llava"


@pytest.fixture(autouse=True)
def cache_outside_the_tree(tmp_path_factory, monkeypatch):
    """A check run inside a sample folder keeps its cache in the test run's temporary folder, never in the
    repository; the tests of where the cache goes by default remove the variable themselves."""
    monkeypatch.setenv(CACHE_DIR_VARIABLE, str(tmp_path_factory.getbasetemp() / "trainlint-cache"))


def write_tree(root: Path, files: Dict[str, str]) -> Path:
    for relative, content in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    return root


class Cli:
    """Runs the real command line in a folder and reads its JSON output."""

    def __init__(self, capsys, monkeypatch):
        self.capsys = capsys
        self.monkeypatch = monkeypatch

    def run(self, folder: Path, *argv: str):
        self.monkeypatch.chdir(folder)
        self.capsys.readouterr()
        code = main(list(argv))
        captured = self.capsys.readouterr()
        return code, captured.out, captured.err

    def check_json(self, folder: Path, *argv: str):
        code, out, err = self.run(folder, "check", *argv, "--output-format", "json")
        return code, json.loads(out)

    def codes(self, folder: Path, *argv: str) -> List[str]:
        _, document = self.check_json(folder, *argv)
        return sorted(f["code"] for f in document["findings"])


@pytest.fixture
def cli(capsys, monkeypatch) -> Cli:
    return Cli(capsys, monkeypatch)


def read_python_whole(path: Path):
    """A Python file's facts read the slow way: the whole module parsed, positioned and walked by libcst, with
    no prefilter. The fast reader must give the same."""
    import libcst as cst

    from trainlint.readers.python import loading
    from trainlint.readers.python.fire_cli import command_functions
    from trainlint.readers.python.prefilter import stdlib_tree
    from trainlint.readers.source import read_source

    source = read_source(path)
    commands = command_functions(stdlib_tree(source.text), source.text)
    module = loading._walk_whole(source, False, cst.parse_module(source.text), commands)
    return loading.whole_module_facts(module, source.text, None)
