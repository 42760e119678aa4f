"""The package versions a repository pins, wherever real repositories write them: requirements files and
their variants, setup.cfg, a conda environment.yml, `pip install` lines of a Dockerfile; the pinned
transformers decides the attention a job runs (eager before 4.36)."""
from __future__ import annotations

from pathlib import Path

import pytest

from trainlint.checks._examples import job
from trainlint.linter import lint, make_target
from trainlint.readers.requirements import read_ceiling, read_pin

DOCKERFILE = """FROM nvcr.io/nvidia/pytorch:23.10-py3
RUN pip install --no-cache-dir -U "transformers==4.31.0" deepspeed==0.10.0 && \\
    pip3 install peft==0.4.0 'accelerate==0.21.0'
"""
ENVIRONMENT = """name: videollm
channels: [pytorch, defaults]
dependencies:
  - python=3.9
  - pytorch=2.0.1
  - pip:
    - transformers==4.28.0
    - peft>=0.3
"""
SETUP_CFG = """[options]
install_requires =
    transformers==4.33.1
    accelerate>=0.20
"""


def _job(folder: Path, pin_file: str, text: str) -> None:
    files = job("--model_name_or_path meta-llama/Llama-2-7b-hf\n--model_max_length 2048\n--bf16 True\n"
                "--per_device_train_batch_size 1\n--output_dir o", launcher="torchrun --nproc_per_node 4")
    files[pin_file] = text
    for name, content in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(content)


def _attention_note(folder: Path) -> str:
    [estimate] = lint([folder], make_target(gpu="a100-80gb")).estimates.values()
    return next(note for note in estimate.assumptions if "attention" in note)


@pytest.mark.parametrize("pin_file, text, version", [
    ("Dockerfile", DOCKERFILE, "4.31.0"),
    ("environment.yml", ENVIRONMENT, "4.28.0"),
    ("setup.cfg", SETUP_CFG, "4.33.1"),
    ("requirements_train.txt", "torch==2.0.1\ntransformers==4.34.0\n", "4.34.0"),
])
def test_a_pin_in_any_file_a_repository_uses_decides_the_attention(tmp_path, pin_file, text, version):
    _job(tmp_path, pin_file, text)
    assert f"eager, the default of the pinned transformers {version}" in _attention_note(tmp_path)


def test_requirements_txt_wins_over_its_variants_and_a_range_pins_nothing(tmp_path):
    _job(tmp_path, "requirements.txt", "transformers>=4.31,<5\n")
    (tmp_path / "requirements_o2.6.txt").write_text("transformers==4.44.2\n")
    assert "eager" not in _attention_note(tmp_path)  # 4.44.2: sdpa, the newer default
    (tmp_path / "requirements.txt").write_text("transformers==4.31.0\n")
    assert "pinned transformers 4.31.0" in _attention_note(tmp_path)


def test_every_word_of_a_pip_install_line_is_its_own_requirement(tmp_path):
    (tmp_path / "Dockerfile").write_text(DOCKERFILE)
    pins = {name: read_pin(tmp_path / "Dockerfile", name) for name in ("transformers", "deepspeed", "peft",
                                                                        "accelerate", "torch")}
    assert {name: pin.value if pin else None for name, pin in pins.items()} == {
        "transformers": "4.31.0", "deepspeed": "0.10.0", "peft": "0.4.0", "accelerate": "0.21.0", "torch": None}
    # The origin is the version token itself, where a fix or a reader's eye goes.
    assert (pins["peft"].origin.line, pins["peft"].origin.column) == (3, 24)
    assert pins["peft"].origin.end_column - pins["peft"].origin.column == len("0.4.0")


@pytest.mark.parametrize("text, token", [
    ("transformers<4.36\n", "4.36"),
    ("transformers~=4.31.0\n", "4.31.0"),
    ("transformers==4.31.*\n", "4.31.*"),
    ("transformers>=4.30,<=4.35.2\n", "4.35.2"),
])
def test_a_range_whose_upper_bound_predates_sdpa_decides_eager_attention(tmp_path, text, token):
    _job(tmp_path, "requirements.txt", text)
    note = _attention_note(tmp_path)
    # The note names the requirement that decided it, at its version token.
    assert f"eager, the default of every release `{text.strip()}` (" in note
    ceiling = read_ceiling(tmp_path / "requirements.txt", "transformers")
    origin = ceiling.setting.origin
    assert text[origin.column - 1:origin.end_column - 1] == token


@pytest.mark.parametrize("text", ["transformers>=4.31,<5\n", "transformers~=4.36\n", "transformers<=4.36.0\n",
                                  "transformers==4.36.*\n", "transformers>=4.31\n"])
def test_a_range_that_admits_4_36_or_later_keeps_the_lower_memory_default(tmp_path, text):
    _job(tmp_path, "requirements.txt", text)
    assert "eager" not in _attention_note(tmp_path)


def test_an_exact_pin_in_a_variant_wins_over_a_range_in_requirements_txt(tmp_path):
    _job(tmp_path, "requirements.txt", "transformers<4.36\n")
    (tmp_path / "requirements_o2.6.txt").write_text("transformers==4.44.2\n")
    assert "eager" not in _attention_note(tmp_path)


def test_a_published_repository_layout_with_a_compatible_release_range():
    """A repository whose setup.py and requirements.txt bound transformers with `~=`: the 2023 stack's
    eager attention, said in the estimate with the requirement that decided it."""
    folder = Path(__file__).parent / "samples" / "versions" / "compatible_release"
    [estimate] = lint([folder], make_target(gpu="a100-80gb", num_gpus=4)).estimates.values()
    note = next(note for note in estimate.assumptions if "attention" in note)
    assert "eager, the default of every release `transformers~=4.33.0`" in note
    assert "requirements.txt:4:" in note
