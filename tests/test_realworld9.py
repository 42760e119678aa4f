"""Constructs met in a ninth round of public fine-tuning repositories, written here in our own words."""
from __future__ import annotations

import pytest

from tests.conftest import write_tree

# A recipe of LLaMA-Factory's v1 trainer (`USE_V1=1 llamafactory-cli train ...`): v1's own argument classes, with
# plugin sections for sharding and adapters, and a micro-batch spelled as axolotl spells it.
_V1_RECIPE = """model: Qwen/Qwen3-4B
model_class: llm
peft_config:
  name: lora
  r: 16
dist_config:
  name: fsdp2
train_dataset: data/v1_sft_demo.yaml
output_dir: outputs/lora
micro_batch_size: 4
cutoff_len: 2048
bf16: true
tf32: true
max_steps: 10
"""

_AXOLOTL_RECIPE = """base_model: Qwen/Qwen2.5-7B
micro_batch_size: 4
gradient_accumulation_steps: 2
sequence_len: 2048
bf16: true
tf32: true
"""


def _runs(cli, folder, *options):
    _, document = cli.check_json(folder, "--isolated", "--no-cache", *options)
    return document


def test_a_llamafactory_v1_recipe_is_not_read_as_axolotl(cli, tmp_path):
    write_tree(tmp_path, {"examples/v1/train_lora_sft.yaml": _V1_RECIPE})
    document = _runs(cli, tmp_path, "--gpu", "v100-32gb")
    [run] = document["runs"]
    assert run["launcher"] == "llamafactory-cli"
    settings = run["settings"]
    assert settings["per_device_train_batch_size"]["value"] == 4
    assert settings["max_seq_length"]["value"] == 2048
    # v1's trainer checkpoints activations by default and picks its own precision: neither HF's nor axolotl's
    # defaults hold, and its `bf16`/`tf32` keys are not TrainingArguments' (no start-up refusal on a V100).
    assert settings["gradient_checkpointing"]["value"] is None
    assert settings["bf16"]["value"] is None
    assert [f["code"] for f in document["findings"]] == ["TL301"]  # the world size alone is unknown, as it is


def test_an_axolotl_recipe_keeps_axolotls_reading(cli, tmp_path):
    write_tree(tmp_path, {"recipe.yaml": _AXOLOTL_RECIPE})
    document = _runs(cli, tmp_path, "--gpu", "v100-32gb")
    [run] = document["runs"]
    assert run["launcher"] == "axolotl"
    assert {"TL203", "TL204"} <= {f["code"] for f in document["findings"]}


_OWN_TF32 = """import argparse

import torch
import transformers

parser = argparse.ArgumentParser()
parser.add_argument("--per_device_train_batch_size", type=int, default=4)
parser.add_argument("--tf32", action="store_true")
args = parser.parse_args()
torch.backends.cuda.matmul.allow_tf32 = args.tf32
loss = None
loss.backward()
"""

_HF_TF32 = """from dataclasses import dataclass, field

import transformers


@dataclass
class ModelArguments:
    model_name_or_path: str = field(default="gpt2")


parser = transformers.HfArgumentParser((ModelArguments, transformers.TrainingArguments))
model_args, training_args = parser.parse_args_into_dataclasses()
transformers.Trainer(model=None, args=training_args).train()
"""


@pytest.mark.parametrize("entry, refused", [(_HF_TF32, True), (_OWN_TF32, False)])
def test_tf32_on_a_v100_is_an_error_only_where_trainingarguments_reads_it(cli, tmp_path, entry, refused):
    # LLaVA's and FastChat's A100 launchers pass `--tf32 True` beside `--bf16 True`.
    write_tree(tmp_path, {"train.py": entry, "finetune.sh": (
        "torchrun --nproc_per_node 4 train.py --per_device_train_batch_size 4 --fp16 True --tf32 True\n")})
    codes = [f["code"] for f in _runs(cli, tmp_path, "--gpu", "v100-32gb")["findings"]]
    assert ("TL204" in codes) is refused


def test_the_port_to_a_v100_turns_tf32_off(cli, tmp_path):
    write_tree(tmp_path, {"train.py": _HF_TF32, "finetune.sh": (
        "torchrun --nproc_per_node 4 train.py --per_device_train_batch_size 4 --fp16 True --tf32 True\n")})
    cli.run(tmp_path, "fix", "--isolated", "--gpu", "v100-32gb", "--num-gpus", "4")
    assert "--tf32 False" in (tmp_path / "finetune.sh").read_text()


_PATCHED_MEM = """from llama_flash_attn_monkey_patch import replace_llama_attn_with_flash_attn

replace_llama_attn_with_flash_attn()

from train import train

if __name__ == "__main__":
    train()
"""

_XFORMERS_PATCHED = _PATCHED_MEM.replace("flash_attn", "xformers_attn")


@pytest.mark.parametrize("entry, refused", [(_PATCHED_MEM, True), (_XFORMERS_PATCHED, False)])
def test_a_flashattention_patch_on_a_v100_is_an_error_and_an_xformers_one_is_not(cli, tmp_path, entry, refused):
    # FastChat's train_mem.py patches LLaMA's attention before importing the trainer; its train_xformers.py does the
    # same with xformers, which runs on a V100.
    write_tree(tmp_path, {"train_mem.py": entry, "train.py": _HF_TF32, "finetune.sh": (
        "torchrun --nproc_per_node 4 train_mem.py --per_device_train_batch_size 4 --fp16 True\n")})
    findings = [f for f in _runs(cli, tmp_path, "--gpu", "v100-32gb")["findings"] if f["code"] == "TL205"]
    assert bool(findings) is refused
    assert all(f["path"] == "train_mem.py" and f["line"] == 3 for f in findings)


@pytest.mark.parametrize("recipe, refused", [
    # axolotl turns its switch into attn_implementation itself.
    ("base_model: Qwen/Qwen2.5-7B\nmicro_batch_size: 1\nsequence_len: 1024\nfp16: true\nflash_attention: true\n",
     True),
    # LLaMA-Factory falls back to the default attention when flash-attn is not installed.
    ("model_name_or_path: Qwen/Qwen2.5-7B\nstage: sft\nfinetuning_type: lora\nflash_attn: fa2\n"
     "per_device_train_batch_size: 1\ncutoff_len: 1024\nfp16: true\n", False),
])
def test_a_recipes_flash_attention_switch_is_an_error_where_its_framework_never_falls_back(cli, tmp_path, recipe,
                                                                                          refused):
    write_tree(tmp_path, {"recipe.yaml": recipe})
    codes = [f["code"] for f in _runs(cli, tmp_path, "--gpu", "v100-32gb")["findings"]]
    assert ("TL205" in codes) is refused


_TRAIN_WITH_KERNEL_PARAMETER = _HF_TF32.replace(
    "parser = transformers.HfArgumentParser",
    "def train(attn_implementation=None):\n    parser = transformers.HfArgumentParser",
).replace("model_args, training_args = parser", "    model_args, training_args = parser").replace(
    "transformers.Trainer(model=None, args=training_args).train()",
    "    model = transformers.AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path,\n"
    "                                                              attn_implementation=attn_implementation)\n"
    "    transformers.Trainer(model=model, args=training_args).train()\n\n\nif __name__ == \"__main__\":\n    train()")


@pytest.mark.parametrize("entry, refused", [("train_mem.py", True), ("train.py", False)])
def test_the_kernel_an_entry_passes_to_the_trainer_function_is_the_jobs(cli, tmp_path, entry, refused):
    # LLaVA's train_mem.py: `train(attn_implementation="flash_attention_2")`; its train.py run directly passes none.
    write_tree(tmp_path, {
        "train.py": _TRAIN_WITH_KERNEL_PARAMETER,
        "train_mem.py": 'from train import train\n\nif __name__ == "__main__":\n'
                        '    train(attn_implementation="flash_attention_2")\n',
        "finetune.sh": f"torchrun --nproc_per_node 4 {entry} --per_device_train_batch_size 4 --fp16 True\n"})
    document = _runs(cli, tmp_path, "--gpu", "v100-32gb")
    [run] = document["runs"]
    chosen = run["settings"]["attn_implementation"]
    assert (chosen["value"] == "flash_attention_2") is refused
    flagged = [f for f in document["findings"] if f["code"] == "TL205"]
    assert [(f["path"], f["line"]) for f in flagged] == ([("train_mem.py", 4)] if refused else [])


def test_a_memory_fix_puts_the_jobs_batch_on_its_command_not_in_the_entry_scripts_default(cli, tmp_path):
    # DeepSpeed-Chat's single-GPU OPT launcher leaves the batch to main.py's default of 16, which every other launch
    # of main.py that omits the flag (a README's command among them) reads too.
    from trainlint.checks._examples import TRAIN_PY, ZERO2

    train_py = TRAIN_PY.replace("{eval_dataset}", "None").replace(
        "    model_max_length: int = field(default=2048)\n",
        "    model_max_length: int = field(default=2048)\n    per_device_train_batch_size: int = field(default=16)\n")
    write_tree(tmp_path, {"train.py": train_py, "zero2.json": ZERO2, "finetune.sh": (
        "deepspeed --num_gpus 1 train.py --model_name_or_path facebook/opt-350m \\\n"
        "    --bf16 True --deepspeed zero2.json \\\n    --gradient_accumulation_steps 8 > train.log\n")})
    cli.run(tmp_path, "fix", "--isolated", "--gpu", "rtx3090", "--num-gpus", "1", "--preserve-effective-batch")
    assert (tmp_path / "train.py").read_text() == train_py
    launcher = (tmp_path / "finetune.sh").read_text()
    assert "--per_device_train_batch_size 8 > train.log" in launcher and "--gradient_accumulation_steps 16" in launcher


def test_one_repair_rejoins_a_command_a_comment_line_cuts_before_every_flag(cli, tmp_path):
    # MiniCPM's SFT launcher explains each flag on a comment line of its own inside the continued command: bash ends
    # the command at the first comment and runs each flag line as a command of its own.
    flags = ["--model_name_or_path gpt2", "--per_device_train_batch_size 14", "--gradient_accumulation_steps 2",
             "--bf16 True", "--output_dir out"]
    lines = ["deepspeed --include localhost:0,1 train.py \\"]
    for index, flag in enumerate(flags):
        lines += [f"    # what {flag.split()[0]} does", f"    {flag}" + (" \\" if index < len(flags) - 1 else "")]
    write_tree(tmp_path, {"train.py": _HF_TF32, "finetune.sh": "\n".join(lines) + "\n"})
    [broken] = [f for f in _runs(cli, tmp_path)["findings"] if f["code"] == "TL304"]
    assert len(broken["fix"]["edits"]) == len(flags)
    cli.run(tmp_path, "fix", "--isolated", "--unsafe-fixes", "--select", "TL304")
    assert (tmp_path / "finetune.sh").read_text() == "\n".join(
        [lines[0], *(f"    {flag}" + (" \\" if i < len(flags) - 1 else "") for i, flag in enumerate(flags))]) + "\n"
    assert not [f for f in _runs(cli, tmp_path)["findings"] if f["code"] == "TL304"]


def test_a_model_that_shares_a_catalog_row_is_named_as_the_job_writes_it(cli, tmp_path):
    # LLamaTuner's pre-training launcher trains Qwen2.5-1.5B, whose dimensions are the Qwen2-1.5B row's, in fp32.
    write_tree(tmp_path, {"train.py": _HF_TF32, "finetune.sh": (
        "torchrun --nproc_per_node 1 train.py --model_name_or_path Qwen/Qwen2.5-1.5B "
        "--per_device_train_batch_size 1\n")})
    [fp32] = [f for f in _runs(cli, tmp_path)["findings"] if f["code"] == "TL105"]
    assert fp32["message"].startswith("Qwen/Qwen2.5-1.5B (1.5B parameters) trains in fp32")
