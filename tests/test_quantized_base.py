"""Whether the base model is quantized decides what its weights hold. A switch whose value trainlint cannot read
(`load_in_8bit=USE_8BIT`) counts as on, as every setting that lowers memory does; a checkpoint published quantized
(`...-AWQ`, `...-GPTQ-Int4`, `...-bnb-4bit`) loads its quantized weights whatever the flags say. Written after
Chinese-Vicuna's 8-bit LoRA script and LLaMA-Factory's AWQ and GPTQ examples, run on the small cards their READMEs
name."""
from __future__ import annotations

import pytest

from tests.conftest import write_tree
from trainlint.resolution.frameworks.hf_trainer import prequantized_bits

_LORA_8BIT_SCRIPT = '''\
import argparse
import os

import transformers
from peft import LoraConfig, get_peft_model

parser = argparse.ArgumentParser()
parser.add_argument("--model_path", type=str, default="huggyllama/llama-7b")
parser.add_argument("--micro_batch", type=int, default=1)
args = parser.parse_args()

CUTOFF_LEN = 256
USE_8BIT = True
if os.environ.get("FULL_PRECISION"):
    USE_8BIT = False

model = transformers.AutoModelForCausalLM.from_pretrained(args.model_path, load_in_8bit=USE_8BIT)
model = get_peft_model(model, LoraConfig(r=8, target_modules=["q_proj", "v_proj"]))
trainer = transformers.Trainer(
    model=model,
    args=transformers.TrainingArguments(per_device_train_batch_size=args.micro_batch, fp16=True, output_dir="out"),
)
trainer.train()
'''


def _errors(document) -> list:
    return sorted(f["code"] for f in document["findings"] if f["severity"] == "error")


def _codes(document) -> list:
    return sorted(f["code"] for f in document["findings"])


def test_a_module_constant_switch_is_read(cli, tmp_path):
    script = _LORA_8BIT_SCRIPT.replace('if os.environ.get("FULL_PRECISION"):\n    USE_8BIT = False\n', "")
    write_tree(tmp_path, {"finetune.py": script,
                          "run.sh": "python finetune.py --model_path huggyllama/llama-7b --micro_batch 1\n"})
    _, document = cli.check_json(tmp_path, "run.sh", "--isolated", "--no-cache", "--gpu-memory", "10.7GiB",
                                 "--num-gpus", "1")
    run = document["runs"][0]
    # `USE_8BIT = True`, bound once at the top of the script: the value where it is written.
    assert run["settings"]["bits"] == {"value": 8, "path": "finetune.py", "line": 13, "column": 12}
    assert not any("quantized is unknown" in line for line in run["memory"]["unknowns"])


def test_an_unreadable_quantization_switch_counts_as_on(cli, tmp_path):
    write_tree(tmp_path, {"finetune.py": _LORA_8BIT_SCRIPT,
                          "run.sh": "python finetune.py --model_path huggyllama/llama-7b --micro_batch 1\n"})
    _, document = cli.check_json(tmp_path, "run.sh", "--isolated", "--no-cache", "--gpu-memory", "10.7GiB",
                                 "--num-gpus", "1")
    # 7B weights in 16-bit are 12.6 GiB: over the card, were the switch taken as off.
    assert "TL108" not in _errors(document)
    run = document["runs"][0]
    assert run["settings"]["bits"]["value"] is None and "USE_8BIT" in run["settings"]["bits"]["reason"]
    # An 8-bit switch alone can give no fewer bits than 8.
    assert "8-bit base: linear weights at 1.06 B/param, embeddings 16-bit" in run["memory"]["assumptions"]
    assert ("whether the base model is quantized is unknown (load_in_8bit is expression `USE_8BIT`): assumed 8-bit"
            in run["memory"]["unknowns"])


_AWQ_RECIPE = """\
model_name_or_path: {model}
stage: sft
do_train: true
finetuning_type: lora
lora_target: all
dataset: identity
template: llama3
cutoff_len: 1024
per_device_train_batch_size: 1
gradient_accumulation_steps: 8
bf16: true
output_dir: saves/llama3-8b/lora/sft
"""


@pytest.mark.parametrize("model, codes", [
    ("TechxGenus/Meta-Llama-3-8B-Instruct-AWQ", []),  # 4-bit weights: about 5 GiB
    ("meta-llama/Meta-Llama-3-8B-Instruct", ["TL111"]),  # 16-bit weights alone are 15 GiB of the 15.4
])
def test_a_checkpoint_published_quantized_loads_quantized_weights(cli, tmp_path, model, codes):
    write_tree(tmp_path, {"llama3_lora_sft.yaml": _AWQ_RECIPE.format(model=model)})
    _, document = cli.check_json(tmp_path, "llama3_lora_sft.yaml", "--isolated", "--no-cache", "--gpu", "rtx4080",
                                 "--num-gpus", "1")
    assert _codes(document) == codes


@pytest.mark.parametrize("name, bits", [
    ("TheBloke/Llama-2-7B-AWQ", 4),
    ("Qwen/Qwen-7B-Chat-Int4", 4),
    ("Qwen/Qwen1.5-7B-Chat-GPTQ-Int8", 8),
    ("unsloth/llama-3-8b-bnb-4bit", 4),
    ("TechxGenus/Meta-Llama-3-8B-Instruct-GPTQ", 4),
    ("meta-llama/Meta-Llama-3-8B-Instruct", None),
    ("/data/gptq_models/llama-7b", None),  # a folder name, not the checkpoint's
    ("mistralai/Mistral-7B-v0.1", None),
])
def test_the_bits_a_checkpoint_name_states(name, bits):
    assert prequantized_bits(name) == bits


_QLORA_65B = """\
model_name_or_path: huggyllama/llama-65b
stage: sft
do_train: true
finetuning_type: lora
lora_target: all
lora_rank: 64
quantization_bit: 4
optim: {optim}
dataset: alpaca_en
template: default
cutoff_len: 512
per_device_train_batch_size: 1
gradient_accumulation_steps: 16
gradient_checkpointing: true
bf16: true
output_dir: saves/llama-65b/qlora
"""


@pytest.mark.parametrize("optim, codes", [
    ("paged_adamw_32bit", []),  # QLoRA's paged optimizer: its states page out to CPU memory when the GPU runs short
    ("adamw_torch", ["TL108"]),  # 65B at 4 bits and 0.8B adapters with AdamW states: just over 48 GB
])
def test_a_paged_optimizers_states_do_not_count_on_the_gpu(cli, tmp_path, optim, codes):
    """The QLoRA paper's 65B on one 48 GB card (its guanaco-65b script)."""
    write_tree(tmp_path, {"qlora_65b.yaml": _QLORA_65B.format(optim=optim)})
    _, document = cli.check_json(tmp_path, "qlora_65b.yaml", "--isolated", "--no-cache", "--gpu", "a6000",
                                 "--num-gpus", "1")
    assert _codes(document) == codes
