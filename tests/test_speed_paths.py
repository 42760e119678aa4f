"""The fast paths keep their answers: memoised catalog look-ups answer as before, and a check served
from the cache does not load the parsers it no longer needs."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from trainlint.checks._examples import TRAIN_PY, ZERO2
from trainlint.memory.catalog import find_model, find_vision_tower

LAUNCHER = """#!/bin/bash
deepspeed train.py --deepspeed zero2.json --model_name_or_path lmsys/vicuna-7b-v1.5 \\
    --bf16 True --per_device_train_batch_size 16 --gradient_accumulation_steps 1 --model_max_length 2048
"""


def test_catalog_lookups_by_repo_alias_and_fuzzy_name():
    assert find_model("meta-llama/Llama-2-7b-hf").key == "llama-2-7b"
    assert find_model("lmsys/vicuna-7b-v1.5").key == "llama-2-7b"
    assert find_model("/checkpoints/llava-v1.5-7b-merged").key == "llama-2-7b"
    assert find_model("./ckpt/my-vicuna-7b-run3").key == "llama-2-7b"  # fuzzy: the alias inside the name
    assert find_model("nothing-we-know") is None
    assert find_model("   ") is None


def test_memoised_lookups_keep_kinds_apart():
    tower = "openai/clip-vit-large-patch14-336"
    assert find_model(tower) is None  # not an LLM
    assert find_model(tower, kinds=("vision",)).key == "clip-vit-large-patch14-336"
    assert find_model(tower, kinds=["vision"]).key == "clip-vit-large-patch14-336"  # a list works too
    assert find_vision_tower(tower).key == "clip-vit-large-patch14-336"
    assert find_model(tower) is None  # the vision answer did not leak into the LLM look-up
    assert find_model("lmsys/vicuna-7b-v1.5") is find_model("lmsys/vicuna-7b-v1.5")


def _check(tree: Path, cache: Path) -> subprocess.CompletedProcess:
    probe = (
        "import sys\n"
        "from trainlint.cli import main\n"
        "try:\n"
        "    main(['check', 'launch.sh', '--output-format', 'json', '--exit-zero', '--cache-dir', sys.argv[1]])\n"
        "finally:\n"
        "    loaded = sorted(name for name in ('libcst', 'yaml', 'trainlint.core') if name in sys.modules)\n"
        "    print('LOADED ' + ','.join(loaded), file=sys.stderr)\n"
    )
    return subprocess.run([sys.executable, "-c", probe, str(cache)], cwd=tree, capture_output=True, text=True,
                          check=True)


def _loaded(done: subprocess.CompletedProcess) -> str:
    return next(line for line in done.stderr.splitlines() if line.startswith("LOADED")).split(" ", 1)[1]


def _project(tmp_path: Path) -> Path:
    tree = tmp_path / "project"
    tree.mkdir()
    (tree / "train.py").write_text(TRAIN_PY.replace("{eval_dataset}", "None"))
    (tree / "zero2.json").write_text(ZERO2)
    (tree / "launch.sh").write_text(LAUNCHER)
    return tree


def test_a_warm_check_loads_no_python_parser_and_reports_the_same(tmp_path):
    tree = _project(tmp_path)
    cache = tmp_path / "cache"

    cold = _check(tree, cache)
    warm = _check(tree, cache)

    assert "libcst" in _loaded(cold)  # the entry script was parsed once...
    assert _loaded(warm) == ""  # ...and the stored report came from the cache, without the scan's types
    assert json.loads(warm.stdout) == json.loads(cold.stdout)
    assert json.loads(warm.stdout)["findings"]  # a real report, not an empty one


def test_a_file_written_beside_the_tree_does_not_spoil_the_stored_result(tmp_path):
    """The folders above a tree outside any repository (`/tmp`, a home folder) are never looked into, so what
    anyone writes there leaves a stored result valid."""
    tree = _project(tmp_path)
    cache = tmp_path / "cache"
    cold = _check(tree, cache)
    (tmp_path / "unrelated.log").write_text("another program's output\n")
    (tmp_path / "requirements_extra.txt").write_text("transformers==4.31.0\n")  # above the tree: not read
    warm = _check(tree, cache)
    assert _loaded(warm) == ""
    assert json.loads(warm.stdout) == json.loads(cold.stdout)
