"""A model known only by the size in its name: the parameter count is read, and TL108 judges the least
a model of that size can hold."""
from __future__ import annotations

import pytest

from trainlint.linter import lint, make_target
from trainlint.memory.size_from_name import stated_size


@pytest.mark.parametrize("name, params_b, text", [
    ("/data/models/7B", 7.0, "7b"),
    ("my-finetune-13b", 13.0, "13b"),
    ("opt-1.3b", 1.3, "1.3b"),
    ("qwen-1_8b-chat", 1.8, "1.8b"),
    ("tiny-350m", 0.35, "350m"),
    ("mixtral-8x7b-instruct", 56.0, "8x7b"),
    ("/runs/2b-sweep/ckpt-70B", 70.0, "70b"),
])
def test_the_size_is_read_from_the_name(name, params_b, text):
    stated = stated_size(name)
    assert stated is not None and stated.params_b == pytest.approx(params_b) and stated.text == text


@pytest.mark.parametrize("name", ["checkpoint-1000", "llava-v1.5", "llama2", "/data/models/base"])
def test_a_name_without_a_size_states_none(name):
    assert stated_size(name) is None


def test_the_lowest_plausible_size_allows_rounding_and_shared_experts():
    assert stated_size("x-13b").lowest_plausible_params_b == pytest.approx(11.7)
    assert stated_size("x-8x7b").lowest_plausible_params_b == pytest.approx(42.0)  # Mixtral holds 46.7B


def _tl108(tmp_path, model: str, gpus: int, gpu: str):
    (tmp_path / "train.py").write_text(
        "import transformers\n\n"
        "def main():\n"
        "    parser = transformers.HfArgumentParser((transformers.TrainingArguments,))\n"
        "    parser.parse_args_into_dataclasses()\n"
    )
    (tmp_path / "run.sh").write_text(
        f"torchrun --nproc_per_node {gpus} train.py --model_name_or_path {model} --bf16 True "
        "--per_device_train_batch_size 1 --output_dir out\n")
    result = lint([tmp_path], make_target(gpu=gpu, num_gpus=gpus))
    return [f for f in result.findings if f.code == "TL108"]


def test_tl108_reports_a_size_from_the_name_that_cannot_fit(tmp_path):
    findings = _tl108(tmp_path, "/data/models/acme-13b", 2, "a100-40gb")
    assert len(findings) == 1
    assert "13b was read from the model's name" in findings[0].message


def test_tl108_stays_quiet_when_a_plausible_size_of_that_name_fits(tmp_path):
    assert _tl108(tmp_path, "/data/models/acme-1b", 2, "a100-80gb") == []
