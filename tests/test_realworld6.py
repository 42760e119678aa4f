"""Constructs met in a sixth round of public fine-tuning repositories (RL and alignment frameworks, model
vendors' fine-tuning folders), written here in our own words."""
from __future__ import annotations

from pathlib import Path

from tests.conftest import write_tree
from trainlint.resolution import scan
from trainlint.resolution.workspace import Workspace


def _run(folder: Path, name: str):
    [run] = scan([folder / name], workspace=Workspace(folder)).runs
    return run


def _findings(cli, folder: Path, code: str):
    _, document = cli.check_json(folder, "--isolated", "--no-cache", "--gpu", "a100-80gb", "--num-gpus", "8")
    return [f for f in document["findings"] if f["code"] == code]


# ------------------------------------------------------------- a folder of scripts named like the package
_MODULE_LAUNCH = "deepspeed --module toolkit.trainers.sft --model_name_or_path meta-llama/Llama-2-7b-hf\n"


def test_a_folder_of_shell_scripts_named_like_the_package_is_not_the_package(cli, tmp_path):
    # `scripts/toolkit/` holds launchers only; the `toolkit` package comes from an installed distribution.
    write_tree(tmp_path, {"scripts/toolkit/sft.sh": _MODULE_LAUNCH, "scripts/toolkit/rm.sh": "echo rm\n"})
    assert _findings(cli, tmp_path, "TL302") == []


def test_a_package_folder_that_lacks_the_module_still_makes_it_missing(cli, tmp_path):
    write_tree(tmp_path, {"scripts/sft.sh": _MODULE_LAUNCH, "toolkit/__init__.py": "",
                          "toolkit/trainers/__init__.py": "", "toolkit/trainers/rm.py": "print(1)\n"})
    assert len(_findings(cli, tmp_path, "TL302")) == 1
