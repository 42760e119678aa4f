"""A script that trains with a trainer of the repository's own, which is no HF Trainer (CoLLiE's `Trainer`, set up
by its config object: pipeline stages, DeepSpeed, precision), decides its sharding in that trainer: naming no
DeepSpeed config says nothing of it. A LoraConfig built in code may wrap the model wherever the config goes (CoLLiE
takes it as `config.peft_config`). Written in our own words after CoLLiE's memory-profiling examples."""
from __future__ import annotations

from pathlib import Path

from tests.conftest import write_tree

_ENTRY = '''import argparse

import torch
from peft import LoraConfig, PrefixTuningConfig

from collie.config import CollieConfig
from {trainer_module} import Trainer

arg_parser = argparse.ArgumentParser()
arg_parser.add_argument("--model_name", type=str, default="huggyllama/llama-7b")
arg_parser.add_argument("--peft", type=str, default="lora")
arg_parser.add_argument("--pp_size", type=int, default=1)
args = arg_parser.parse_args()

config = CollieConfig.from_pretrained(args.model_name)
config.pp_size = args.pp_size
if args.peft == "lora":
    config.peft_config = LoraConfig(r=8, lora_alpha=32, target_modules=["q_proj", "v_proj"])
elif args.peft == "prefix-tuning":
    config.peft_config = PrefixTuningConfig(num_virtual_tokens=20)
model = build_model(config)
optimizer = torch.optim.Adam(filter(lambda p: p.requires_grad, model.parameters()), lr=2e-5)
trainer = Trainer(model=model, config=config, optimizer=optimizer)
trainer.train()
'''

_LAUNCHER = """model_name="huggyllama/llama-65b"
pp_size=2
for peft in "lora" "prefix-tuning"; do
  torchrun --nproc_per_node ${pp_size} memory_peft.py --model_name ${model_name} --peft ${peft} --pp_size ${pp_size}
done
"""


def _errors(cli, folder: Path, trainer_module: str) -> list:
    write_tree(folder, {
        "examples/memory_peft.py": _ENTRY.replace("{trainer_module}", trainer_module),
        "examples/profile_memory.sh": _LAUNCHER,
        "collie/__init__.py": "",
        "collie/config.py": "class CollieConfig:\n    pass\n",
        "collie/controller.py": "class Trainer:\n    def __init__(self, model, config, optimizer):\n        pass\n",
    })
    _, document = cli.check_json(folder, "--isolated", "--no-cache", "--gpu", "a100-80gb")
    return sorted(f["code"] for f in document["findings"] if f["severity"] == "error")


def test_the_repositorys_own_trainer_leaves_the_sharding_unknown(cli, tmp_path):
    assert _errors(cli, tmp_path, "collie.controller") == []


def test_under_hfs_trainer_a_65b_model_in_fp32_does_not_fit_two_cards_even_frozen(cli, tmp_path):
    # HF's Trainer without bf16 keeps the weights in fp32 on every GPU: 65B x 4 bytes, adapters or not.
    assert _errors(cli, tmp_path, "transformers") == ["TL108"]
