"""A TRL-style file of arguments checked by itself (its launch command lives in a README) that says
`use_peft: true`: TRL's switch for the adapters `get_peft_config` builds. Written after recipes that keep a full
and a LoRA variant of one fine-tune side by side."""
from __future__ import annotations

from tests.conftest import write_tree

_RECIPE = """model_name_or_path: Qwen/Qwen2.5-7B-Instruct
per_device_train_batch_size: 4
gradient_accumulation_steps: 4
output_dir: out/sft
bf16: true
gradient_checkpointing: true
max_seq_length: 2048
eval_strategy: 'no'
{peft}
"""
_LORA = "use_peft: true\nlora_r: 16\nlora_alpha: 32\nlora_target_modules:\n  - q_proj\n  - v_proj\n"


def _run(cli, tmp_path, peft: str) -> dict:
    write_tree(tmp_path, {"recipes/config.yaml": _RECIPE.format(peft=peft)})
    _, document = cli.check_json(tmp_path, "recipes/config.yaml", "--isolated", "--no-cache", "--gpu", "a100-80gb",
                                 "--num-gpus", "8")
    return document["runs"][0]


def test_use_peft_in_a_lone_recipe_means_adapters(cli, tmp_path):
    run = _run(cli, tmp_path, _LORA)
    assert run["settings"]["lora"] == {"value": True, "path": "recipes/config.yaml", "line": 9, "column": 11}
    assert any(line.startswith("LoRA r=16") for line in run["memory"]["assumptions"])


def test_use_peft_false_leaves_a_full_fine_tune(cli, tmp_path):
    run = _run(cli, tmp_path, _LORA.replace("use_peft: true", "use_peft: false"))
    assert run["settings"].get("lora", {}).get("value") in (None, False)
    assert not any(line.startswith("LoRA") for line in run["memory"]["assumptions"])
