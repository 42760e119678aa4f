"""Constructs met in an eighth round of public fine-tuning repositories, written here in our own words."""
from __future__ import annotations

import json

import pytest

from tests.conftest import write_tree
from trainlint.checks._examples import TRAIN_PY

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


_PREDICT_ONLY = '''from dataclasses import dataclass

import transformers


@dataclass
class ModelArguments:
    model_name_or_path: str = "meta-llama/Llama-2-13b-hf"


parser = transformers.HfArgumentParser((ModelArguments, transformers.Seq2SeqTrainingArguments))
model_args, training_args = parser.parse_args_into_dataclasses()
model = transformers.AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)
trainer = transformers.Seq2SeqTrainer(model=model, args=training_args, train_dataset=None)
{last}
'''
_ZERO_INFERENCE = ("torchrun --nproc_per_node 8 zero_inference.py --deepspeed ds.json --output_dir out "
                   "--per_device_eval_batch_size 64 --per_device_train_batch_size 64 --model_max_length 8192\n")


@pytest.mark.parametrize("last, trains", [
    ("predictions = trainer.predict(dataset)", False),
    ("trainer.train()", True),
    ("run = trainer.train\nrun()", True),
    ("trainer.predict(dataset)  # trainer.train() comes later", True),  # a mention is enough to make no claim
    ("run_with(trainer)", True),  # handed to code that may train it: no claim
])
def test_a_script_that_builds_a_trainer_and_only_predicts_takes_no_training_step(cli, tmp_path, last, trains):
    write_tree(tmp_path, {"zero_inference.py": _PREDICT_ONLY.format(last=last), "run.sh": _ZERO_INFERENCE,
                          "ds.json": '{"zero_optimization": {"stage": 3}, "train_micro_batch_size_per_gpu": "auto"}'})
    _, document = cli.check_json(tmp_path, "--isolated", "--no-cache", "--gpu", "a100-40gb", "--num-gpus", "8")
    (run,) = document["runs"]
    memory = [f for f in document["findings"] if f["code"].startswith("TL1") and f["severity"] != "info"]
    assert bool(memory) is trains
    if not trains:
        assert run["memory"] is None or "never calls its train()" in json.dumps(run)


@pytest.mark.parametrize("named, read", [("../hostfile", False), ("hostfile", True), ("./hostfile", True)])
def test_a_hostfile_is_read_from_where_the_launch_runs(cli, tmp_path, named, read):
    # MGM-style: the entry path resolves only from the repository's root, so the launch runs there, and
    # `../hostfile` names a file above the repository, not the root's `hostfile` seen from `scripts/`.
    launcher = (f"#!/bin/bash\ndeepspeed --hostfile {named} \\\n    mgm/train/train_mem.py \\\n"
                "    --deepspeed ./scripts/zero2.json --per_device_train_batch_size 4\n")
    write_tree(tmp_path, {".git/HEAD": "ref: refs/heads/main\n", "hostfile": "node_0 slots=8\nnode_1 slots=8\n",
                          "scripts/llama3/train/stage_1.sh": launcher, "scripts/zero2.json": "{}",
                          "mgm/train/train_mem.py": TRAIN_PY.replace("{eval_dataset}", "None")})
    _, document = cli.check_json(tmp_path, "--isolated", "--no-cache", "--num-gpus", "8")
    (run,) = document["runs"]
    assert (run["world_size"] == 16) is read
    assert bool([f for f in document["findings"] if f["code"] == "TL112"]) is read


_SEQUENCE_PARALLEL_ENTRY = '''from dataclasses import dataclass, field

import transformers


@dataclass
class DataTrainingArguments:
    sequence_parallel_degree: int = field(default=1, metadata={"help": "Sequence parallelism degree."})
    max_seq_length: int = 8192


@dataclass
class ModelArguments:
    model_name_or_path: str = "Qwen/Qwen2.5-7B-Instruct"


parser = transformers.HfArgumentParser((ModelArguments, DataTrainingArguments, transformers.TrainingArguments))
model_args, data_args, training_args = parser.parse_args_into_dataclasses()
trainer = transformers.Trainer(args=training_args)
trainer.train()
'''


@pytest.mark.parametrize("degree", [1, 4])
def test_the_scripts_own_sequence_parallel_degree_splits_each_sequence(cli, tmp_path, degree):
    # Eagle 2.5-style: the length is that of a whole sequence-parallel group, each GPU holding a quarter of it.
    launcher = ("torchrun --nproc_per_node 8 finetune.py --deepspeed zero3.json --bf16 True --output_dir out "
                f"--per_device_train_batch_size 1 --max_seq_length 65536 --sequence_parallel_degree {degree} "
                "--gradient_checkpointing True\n")
    write_tree(tmp_path, {"finetune.py": _SEQUENCE_PARALLEL_ENTRY, "train.sh": launcher,
                          "zero3.json": '{"zero_optimization": {"stage": 3}}'})
    _, document = cli.check_json(tmp_path, "--isolated", "--no-cache", "--gpu", "a100-80gb", "--num-gpus", "8")
    (run,) = document["runs"]
    logits = run["memory"]["breakdown"]["logits"]
    single = 65536 * 152064 * 12 / 2**30  # §8: 12 bytes per logit of the whole sequence on one GPU
    assert logits == pytest.approx(single / degree, rel=0.05)
    assert (run["settings"].get("sequence_parallel_degree") is not None) is (degree > 1)


def test_a_predict_only_job_ported_to_fewer_gpus_changes_only_its_count(cli, tmp_path):
    # No training step, so no global batch to keep: the accumulation is left as it is.
    write_tree(tmp_path, {"zero_inference.py": _PREDICT_ONLY.format(last="predictions = trainer.predict(dataset)"),
                          "run.sh": _ZERO_INFERENCE,
                          "ds.json": '{"zero_optimization": {"stage": 3}, "train_micro_batch_size_per_gpu": "auto"}'})
    code, _out, _err = cli.run(tmp_path, "fix", "--isolated", "--num-gpus", "2",
                              "--preserve-effective-batch", ".")
    assert code == 0
    launcher = (tmp_path / "run.sh").read_text()
    assert launcher.startswith("torchrun --nproc_per_node 2 zero_inference.py")
    assert "gradient_accumulation_steps" not in launcher


_CALLER_DEFAULTS = """set -x
export BS=${1:-16}
export GPUNUM=${2:-1}
torchrun --nproc_per_node ${GPUNUM} run_clm.py --model_name_or_path facebook/opt-125m --output_dir out \\
  --per_device_train_batch_size ${BS} 2>&1 | tee ./logs/bs_${BS}_gpu_${GPUNUM}.log
"""


@pytest.mark.parametrize("logged, edited", [(True, False), (False, True)])
def test_a_port_never_writes_over_a_callers_argument(cli, tmp_path, logged, edited):
    # ColossalAI-style: the README runs `bash run_clm.sh 16 4`. Where the defaults feed a log name too, they cannot
    # be edited alone, and a literal at the flag would override every caller's arguments: left for a human.
    log = " 2>&1 | tee ./logs/bs_${BS}_gpu_${GPUNUM}.log"
    launcher = _CALLER_DEFAULTS if logged else _CALLER_DEFAULTS.replace(log, "")
    write_tree(tmp_path, {"run_clm.sh": launcher, "run_clm.py": TRAIN_PY.replace("{eval_dataset}", "None")})
    cli.run(tmp_path, "fix", "--isolated", "--gpu", "a100-80gb", "--num-gpus", "2", "--preserve-effective-batch", ".")
    text = (tmp_path / "run_clm.sh").read_text()
    assert "--nproc_per_node ${GPUNUM}" in text and "--per_device_train_batch_size ${BS}" in text
    assert ("GPUNUM=${2:-2}" in text and "BS=${1:-8}" in text) is edited
    assert ("BS=${1:-16}" in text and "GPUNUM=${2:-1}" in text) is not edited


_DIFFUSION_ENTRY = '''import argparse

{imports}import torch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_name_or_path", type=str)
    parser.add_argument("--per_device_train_batch_size", type=int, default=1)
    args = parser.parse_args()
    loss = torch.zeros(1)
    loss.backward()


if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize("imports, estimated", [("from diffusers import DiffusionPipeline\n", False), ("", True)])
def test_a_size_in_the_name_of_a_diffusers_model_is_no_language_model_shape(cli, tmp_path, imports, estimated):
    # A "2B" video DiT trained with a diffusers pipeline is not a 2B language model: no estimate rests on the name.
    write_tree(tmp_path, {"train_lora.py": _DIFFUSION_ENTRY.format(imports=imports),
                          "train_lora.sh": "accelerate launch --num_processes 1 train_lora.py "
                                           "--model_name_or_path nvidia/Cosmos-Predict-Video-2B "
                                           "--per_device_train_batch_size 1\n"})
    _, document = cli.check_json(tmp_path, "--isolated", "--no-cache", "--gpu", "rtx3080")
    (run,) = document["runs"]
    assert (run["memory"]["breakdown"].get("weights", 0) > 0) is estimated
