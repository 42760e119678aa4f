"""A function the entry script hands its parsed arguments to (`build_model(model_args)` from a module of the
repository's own) is read: the quantization and adapters it builds from them decide the memory. Written after
SFT examples that keep model loading in a `utils.py` beside `train.py`."""
from __future__ import annotations

import shutil

from tests.conftest import SAMPLES, write_tree
from trainlint.readers.python import read_python

SAMPLE = SAMPLES / "model_helper"


def _lora_launcher() -> str:
    """qlora.sh with its base kept in 16 bits: LoRA alone."""
    return (SAMPLE / "qlora.sh").read_text().replace("QLoRA on one 24 GB card", "LoRA on a 16-bit base").replace(
        "    --use_4bit_quantization True \\\n", "")


def _run(cli, tmp_path, launcher: str) -> dict:
    shutil.copytree(SAMPLE, tmp_path / "repo")
    write_tree(tmp_path / "repo", {"lora.sh": _lora_launcher()})
    _, document = cli.check_json(tmp_path / "repo", launcher, "--isolated", "--no-cache", "--gpu", "rtx-4090")
    return document["runs"][0]


def test_the_functions_handed_parsed_arguments_are_named_and_classes_are_not(tmp_path):
    script = ("from transformers import HfArgumentParser\nfrom helpers import build_model, Wrapper\n"
              "def main(model_args):\n    model = build_model(model_args)\n    Wrapper(model, model_args)\n"
              "    print(model_args)\n"
              "model_args, = HfArgumentParser((object,)).parse_args_into_dataclasses()\nmain(model_args)\n")
    write_tree(tmp_path, {"train.py": script})
    assert read_python(tmp_path / "train.py").namespace_helpers == ("main", "build_model")


def test_a_4bit_load_in_a_helper_module_reads_the_launchers_flag(cli, tmp_path):
    run = _run(cli, tmp_path, "qlora.sh")
    # `load_in_4bit=args.use_4bit_quantization` in model_setup.py: the value, and the place to edit, is the flag.
    assert run["settings"]["bits"] == {"value": 4, "path": "qlora.sh", "line": 5, "column": 29}
    assert "4-bit base: linear weights at 0.53 B/param, embeddings 16-bit" in run["memory"]["assumptions"]
    assert run["memory"]["high_gib"] < run["memory"]["capacity_gib"]


def test_without_the_flag_the_dataclass_default_keeps_the_base_in_16_bit(cli, tmp_path):
    run = _run(cli, tmp_path, "lora.sh")
    assert run["settings"].get("bits", {}).get("value") is None
    assert run["memory"]["breakdown"]["weights"] > run["memory"]["capacity_gib"]  # 13B in bf16 alone is over 24 GB


def test_get_peft_model_under_a_branch_the_launch_takes_means_adapters(cli, tmp_path):
    run = _run(cli, tmp_path, "lora.sh")
    assert run["settings"]["lora"] == {"value": True, "path": "model_setup.py", "line": 22, "column": 17}
    assert not any("LoRA adapters are used is unknown" in line for line in run["memory"]["unknowns"])


def test_get_peft_model_under_a_branch_the_launch_skips_is_no_adapter(cli, tmp_path):
    shutil.copytree(SAMPLE, tmp_path / "repo")
    launcher = _lora_launcher().replace("    --use_peft_lora True \\\n", "")
    write_tree(tmp_path / "repo", {"full.sh": launcher})
    _, document = cli.check_json(tmp_path / "repo", "full.sh", "--isolated", "--no-cache", "--gpu", "rtx-4090")
    assert document["runs"][0]["settings"].get("lora", {}).get("value") in (None, False)
