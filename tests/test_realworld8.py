"""Constructs met in an eighth round of public fine-tuning repositories, written here in our own words."""
from __future__ import annotations

import pytest

from tests.conftest import write_tree

# An alpaca-lora-style entry script: the accumulation is derived from the world size in code.
_DERIVED_ACCUMULATION = '''import os

import transformers

MICRO_BATCH_SIZE = 4
BATCH_SIZE = 128
GRADIENT_ACCUMULATION_STEPS = BATCH_SIZE // MICRO_BATCH_SIZE
world_size = int(os.environ.get("WORLD_SIZE", 1))
if world_size != 1:
    GRADIENT_ACCUMULATION_STEPS = GRADIENT_ACCUMULATION_STEPS // world_size
model = transformers.AutoModelForCausalLM.from_pretrained("huggyllama/llama-7b")
trainer = transformers.Trainer(
    model=model,
    args=transformers.TrainingArguments(
        per_device_train_batch_size=MICRO_BATCH_SIZE,
        gradient_accumulation_steps=GRADIENT_ACCUMULATION_STEPS,
        output_dir="out",
    ),
)
trainer.train()
'''

_STATED_ACCUMULATION = _DERIVED_ACCUMULATION.replace(
    "gradient_accumulation_steps=GRADIENT_ACCUMULATION_STEPS", "gradient_accumulation_steps=8")


@pytest.mark.parametrize("entry, certain", [(_DERIVED_ACCUMULATION, False), (_STATED_ACCUMULATION, True)])
def test_fewer_processes_than_gpus_claims_a_batch_change_only_when_the_batch_is_known(cli, tmp_path, entry, certain):
    write_tree(tmp_path, {"finetune.py": entry,
                          "scripts/finetune.sh": "CUDA_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node=2 finetune.py\n"})
    _, document = cli.check_json(tmp_path, "--isolated", "--no-cache", "--num-gpus", "8")
    (finding,) = [f for f in document["findings"] if f["code"] == "TL112"]
    assert "6 of the machine's 8 GPUs stay idle" in finding["message"]
    assert ("idle; changing the count alone changes the global batch" in finding["message"]) is certain
    if not certain:
        assert "depends on gradient_accumulation_steps" in finding["message"]


_DPO_ARGUMENTS = '''from dataclasses import dataclass, field
from typing import Optional

import transformers


@dataclass
class ScriptArguments:
    max_length: Optional[int] = field(default=512)


parser = transformers.HfArgumentParser((ScriptArguments, transformers.TrainingArguments))
script_args, training_args = parser.parse_args_into_dataclasses()
trainer = transformers.Trainer(args=training_args)
trainer.train()
'''


def test_an_invalid_value_is_named_by_the_flag_that_wrote_it(cli, tmp_path):
    # A placeholder left in a published script: HfArgumentParser rejects `...` for an int field.
    write_tree(tmp_path, {"dpo_train.py": _DPO_ARGUMENTS,
                          "run_dpo.sh": "max_length=...\ntorchrun --nproc_per_node=8 dpo_train.py "
                                        "--output_dir out --max_length ${max_length}\n"})
    _, document = cli.check_json(tmp_path, "--isolated", "--no-cache")
    (finding,) = [f for f in document["findings"] if f["code"] == "TL303"]
    assert finding["message"].startswith("max_length (read as max_seq_length) cannot take this value")
