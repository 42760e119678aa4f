"""A Megatron-style job: a torchrun launch of an entry script with its own parser and training loop (no HF
Trainer), taking Megatron's `--tensor-model-parallel-size` and `--use-distributed-optimizer`. Its code, not a
DeepSpeed config, decides how the model states are sharded, and tensor or pipeline parallelism splits the model in a
way the memory model does not describe. The samples are written after the Megatron launchers of VLM training
repositories (TP, PP, length and micro-batch from the script's arguments, with defaults)."""
from __future__ import annotations

import shutil

import pytest

from tests.conftest import SAMPLES
from trainlint.core import Unknown
from trainlint.knobs import K
from trainlint.resolution import scan
from trainlint.resolution.frameworks.memory_features import MODEL_PARALLEL
from trainlint.resolution.workspace import Workspace

FOLDER = SAMPLES / "megatron_style"
MEMORY_RULES = {"TL101", "TL102", "TL106", "TL108", "TL110", "TL111"}
# The tensor-parallel degree each variant of the launcher takes when its caller passes none.
VARIANTS = {"sft_7b.sh": '"${1:-1}"', "sft_7b_tp2.sh": '"${1:-2}"', "sft_7b_tp_from_caller.sh": '"$1"'}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """The sample with its launcher in three variants, as repositories ship them side by side."""
    root = tmp_path_factory.mktemp("megatron") / "repo"
    shutil.copytree(FOLDER, root)
    launcher = (root / "examples" / "sft_7b.sh").read_text()
    for name, degree in VARIANTS.items():
        (root / "examples" / name).write_text(launcher.replace(VARIANTS["sft_7b.sh"], degree))
    return root


def _run(folder, name: str):
    [run] = scan([folder / "examples" / name], workspace=Workspace(folder)).runs
    return run


def test_naming_no_deepspeed_config_says_nothing_of_a_non_hf_scripts_sharding(folder):
    stage = _run(folder, "sft_7b.sh").value(K.ZERO_STAGE)
    assert isinstance(stage, Unknown) and "without HF's Trainer" in stage.reason


@pytest.mark.parametrize("launcher, degree", [("sft_7b.sh", None), ("sft_7b_tp2.sh", 2)])
def test_megatron_parallel_flags_give_the_model_parallel_degree(folder, launcher, degree):
    assert _run(folder, launcher).value(MODEL_PARALLEL) == degree


def test_a_parallel_degree_from_the_caller_is_unknown(folder):
    assert isinstance(_run(folder, "sft_7b_tp_from_caller.sh").value(MODEL_PARALLEL), Unknown)


@pytest.mark.parametrize("launcher", ["sft_7b.sh", "sft_7b_tp2.sh", "sft_7b_tp_from_caller.sh"])
def test_no_memory_error_on_a_megatron_style_launch(cli, folder, launcher):
    _, document = cli.check_json(folder, f"examples/{launcher}", "--gpu", "a100-80gb", "--num-gpus", "8")
    assert not [f for f in document["findings"] if f["code"] in MEMORY_RULES and f["severity"] == "error"]


@pytest.mark.parametrize("launcher", ["sft_7b_tp2.sh", "sft_7b_tp_from_caller.sh"])
def test_model_parallel_jobs_get_no_memory_verdict_and_the_estimate_says_why(cli, folder, launcher):
    _, document = cli.check_json(folder, f"examples/{launcher}", "--gpu", "a100-80gb", "--num-gpus", "8")
    assert not [f for f in document["findings"] if f["code"] in MEMORY_RULES]
    _, out, _ = cli.run(folder, "estimate", f"examples/{launcher}", "--gpu", "a100-80gb")
    assert "tensor/pipeline parallelism" in out and "no memory rule judges this job" in out
