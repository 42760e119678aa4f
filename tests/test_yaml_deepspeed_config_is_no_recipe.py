"""A DeepSpeed config written as YAML (accelerate's `deepspeed_config_file: configs/zero2.yaml`) holds
`gradient_accumulation_steps` as a recipe does, beside `zero_optimization`: it is the config a launcher names, not a
job of its own. Written in our own words after CogVideo's fine-tuning configs."""
from __future__ import annotations

from pathlib import Path

from tests.conftest import write_tree
from trainlint.resolution import scan
from trainlint.resolution.workspace import Workspace

_DEEPSPEED_YAML = """{
    "bf16": {"enabled": true},
    "zero_optimization": {"stage": 3, "overlap_comm": true},
    "gradient_accumulation_steps": 1,
    "train_micro_batch_size_per_gpu": 1
}
"""

_RECIPE = """base_model: Qwen/Qwen2-7B
micro_batch_size: 2
gradient_accumulation_steps: 4
sequence_len: 2048
deepspeed: configs/zero3.yaml
"""


def _jobs(folder: Path) -> list:
    found = scan([folder], workspace=Workspace(invocation_dir=folder))
    return sorted(Path(run.id.split(":")[0]).name for run in found.runs)


def test_a_deepspeed_config_in_yaml_is_not_a_job(tmp_path):
    write_tree(tmp_path, {"configs/zero3.yaml": _DEEPSPEED_YAML, "recipes/qwen2-sft.yaml": _RECIPE})
    assert _jobs(tmp_path) == ["qwen2-sft.yaml"]
