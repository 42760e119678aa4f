"""Constructs met in a seventh round of public fine-tuning repositories, written here in our own words."""
from __future__ import annotations

import pytest

from tests.conftest import write_tree
from trainlint.checks._examples import TRAIN_PY
from trainlint.resolution import scan
from trainlint.resolution.workspace import Workspace

_TRAIN = """import argparse


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lm_path", type=str)
    parser.add_argument("--batch_size", type=int, default=8)
    args = parser.parse_args()
    loss = None
    loss.backward()


if __name__ == "__main__":
    main()
"""

_LAUNCHER = """#!/bin/bash
torchrun --nproc_per_node 8 {entry} --lm_path mosaicml/mpt-1b --batch_size 4 --deepspeed ds.json
"""


@pytest.mark.parametrize("entry, missing", [
    ("flamingo/flamingo/train/train.py", False),  # run from the folder holding the checkout `flamingo/`
    ("flamingo/flamingo/train/missing.py", True),
    ("other/flamingo/train/train.py", True),
])
def test_a_path_that_starts_with_the_checkout_folder_names_the_checkouts_file(cli, tmp_path, entry, missing):
    root = tmp_path / "flamingo"
    write_tree(root, {".git/HEAD": "ref: refs/heads/main\n", "flamingo/__init__.py": "",
                      "flamingo/train/__init__.py": "", "flamingo/train/train.py": _TRAIN,
                      "scripts/run_train.sh": _LAUNCHER.format(entry=entry), "ds.json": "{}"})
    _, document = cli.check_json(root, "--isolated", "--no-cache")
    entry_missing = [f for f in document["findings"] if f["code"] == "TL302" and "entry script" in f["message"]]
    assert bool(entry_missing) is missing


@pytest.mark.parametrize("directives, missing", [
    ("#SBATCH --nodes=2\n#SBATCH --gres=gpu:8\n", False),  # runs where it is submitted: unknown, not missing
    ("#SBATCH --nodes=2\n#SBATCH --chdir=/scratch/run\n", True),
    ("", True),  # run as a plain script: next to it, or from where it is started, as any launcher
])
def test_a_batch_script_runs_from_the_folder_it_is_submitted_from(cli, tmp_path, directives, missing):
    # `run_train.py` is another project's (the README says: clone it, submit from there).
    launcher = (f"#!/bin/bash\n{directives}TRAINER=run_train.py\n"
                "srun torchrun --nproc_per_node 8 $TRAINER --per_device_train_batch_size 4 --deepspeed ds.json\n")
    write_tree(tmp_path, {"pretraining/launch.slurm": launcher, "pretraining/ds.json": "{}"})
    _, document = cli.check_json(tmp_path, "--isolated", "--no-cache")
    entry_missing = [f for f in document["findings"] if f["code"] == "TL302" and "entry script" in f["message"]]
    assert bool(entry_missing) is missing


_REWARD_SCRIPT = """from dataclasses import dataclass, field

import transformers

from {trainer_module} import Trainer


@dataclass
class ModelArguments:
    model_name_or_path: str = field(default="huggyllama/llama-7b")


def main():
    parser = transformers.HfArgumentParser((ModelArguments, transformers.TrainingArguments))
    model_args, training_args = parser.parse_args_into_dataclasses()
    model = transformers.AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)
    trainer = Trainer(model=model, args=training_args, train_dataset=[], eval_dataset=[],
                      compute_metrics=lambda prediction: {{}})
    trainer.train()


if __name__ == "__main__":
    main()
"""

_OWN_TRAINER = """import transformers


class Trainer(transformers.Trainer):
    def compute_loss(self, model, inputs, return_outputs=False):
        rewards = model(**inputs).rewards
        return (rewards.mean(), dict(logits=rewards)) if return_outputs else rewards.mean()
"""


@pytest.mark.parametrize("trainer_module, gathers_logits", [
    ("rewardkit.trainer", False),  # the repository's own Trainer, from its `src/` package
    ("transformers", True),
])
def test_a_trainer_from_the_repositorys_src_package_is_its_own(cli, tmp_path, trainer_module, gathers_logits):
    write_tree(tmp_path, {
        "setup.py": "import setuptools\nsetuptools.setup(package_dir={'': 'src'})\n",
        "src/rewardkit/__init__.py": "", "src/rewardkit/trainer.py": _OWN_TRAINER,
        "examples/reward_modeling.py": _REWARD_SCRIPT.format(trainer_module=trainer_module),
        "examples/reward.sh": "torchrun --nproc_per_node 8 examples/reward_modeling.py --bf16 True \\\n"
                              "    --per_device_eval_batch_size 4 --eval_strategy steps --eval_steps 10\n",
    })
    _, document = cli.check_json(tmp_path, "--isolated", "--no-cache")
    assert any(f["code"] == "TL107" for f in document["findings"]) is gathers_logits


_OWN_ARGS = """import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--model", type=str, default="nextgpt")
parser.add_argument("--stage", type=int, default=1)
args = parser.parse_args()
loss = None
loss.backward()
"""

_OTHER_ARGS = _OWN_ARGS.replace('"--model"', '"--config"').replace('"--stage"', '"--steps"')


@pytest.mark.parametrize("root_script, reported", [(_OTHER_ARGS, []), (None, ["per_device_train_batch_size"])])
def test_an_entry_path_two_folders_hold_leaves_its_parser_unknown(cli, tmp_path, root_script, reported):
    # A legacy copy under `legacy/code/` is run from that folder; the repository's root has a `train.py` of its
    # own with other arguments. Which one the launch runs depends on where it is started.
    files = {"legacy/code/train.py": _OWN_ARGS,
             "legacy/code/scripts/train.sh": "deepspeed --include localhost:0 train.py --model nextgpt --stage 1 "
                                             "--per_device_train_batch_size 2\n"}
    if root_script is not None:
        files["train.py"] = root_script
    write_tree(tmp_path, files)
    _, document = cli.check_json(tmp_path, "--isolated", "--no-cache")
    # Run from `legacy/code/`, the script there accepts --model and --stage but not the batch flag.
    flagged = [f["message"].split("`")[1].lstrip("-") for f in document["findings"] if f["code"] == "TL305"]
    assert flagged == reported


def test_an_entry_path_another_folder_of_the_repository_holds_is_unknown_not_missing(cli, tmp_path):
    launcher = "torchrun --nproc_per_node 8 src/open_r1/grpo.py --per_device_train_batch_size 1 --deepspeed z.json\n"
    write_tree(tmp_path, {"src/r1-v/src/open_r1/grpo.py": _OWN_ARGS, "src/scripts/run_grpo.sh": launcher,
                          "src/scripts/run_sft.sh": launcher.replace("grpo.py", "sft.py")})
    _, document = cli.check_json(tmp_path, "--isolated", "--no-cache")
    missing = sorted(f["path"] for f in document["findings"]
                     if f["code"] == "TL302" and "entry script" in f["message"])
    assert missing == ["src/scripts/run_sft.sh"]  # no folder holds `src/open_r1/sft.py`


def test_files_named_beside_an_entry_held_elsewhere_are_unknown_not_missing(cli, tmp_path):
    # Visual-RFT's `src/scripts/*.sh` run `src/open_r1/grpo.py` with `--deepspeed ./local_scripts/zero3.json`; both
    # are under `src/virft/`, where its README has the scripts started.
    launcher = ("torchrun --nproc_per_node 8 src/open_r1/grpo.py --per_device_train_batch_size 1 "
                "--deepspeed ./local_scripts/zero3.json\n")
    write_tree(tmp_path, {"src/virft/src/open_r1/grpo.py": _OWN_ARGS, "src/scripts/run_grpo.sh": launcher,
                          "src/virft/local_scripts/zero3.json": '{"zero_optimization": {"stage": 3}}\n'})
    _, document = cli.check_json(tmp_path, "--isolated", "--no-cache")
    assert not [f for f in document["findings"] if f["code"] == "TL302"]
    [run] = document["runs"]
    stage = run["settings"]["zero_stage"]
    assert stage["value"] is None and "not known statically" in stage["reason"]


_HELPERS = """def add_encoder_params(parser):
    parser.add_argument("--pretrained_model_cfg", type=str)
    parser.add_argument("--sequence_length", type=int, default=512)


def add_training_params(parser):
    parser.add_argument("--batch_size", type=int, default=2)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
"""

_DENSE_ENCODER = """import argparse

from {helpers} import add_encoder_params, add_training_params


def main():
    parser = argparse.ArgumentParser()
    add_encoder_params(parser)
    add_training_params(parser)
    parser.add_argument("--output_dir", type=str)
    args = parser.parse_args()
    loss = None
    loss.backward()


if __name__ == "__main__":
    main()
"""


@pytest.mark.parametrize("helpers, reported", [
    ("dpr.options", ["typo_flag"]),  # the helpers are read: only the flag no one defines is reported
    ("retrievers.options", []),  # an installed package's helpers: the options are not known
])
def test_options_a_parser_gets_from_helper_functions(cli, tmp_path, helpers, reported):
    launcher = ("python3 train_dense_encoder.py --pretrained_model_cfg bert-base-uncased --seed 12345 "
                "--batch_size 128 --gradient_accumulation_steps 2 --sequence_length 256 --output_dir out "
                "--typo_flag 1\n")
    write_tree(tmp_path, {"dpr/__init__.py": "", "dpr/options.py": _HELPERS,
                          "train_dense_encoder.py": _DENSE_ENCODER.format(helpers=helpers),
                          "run_scripts/train.sh": launcher})
    _, document = cli.check_json(tmp_path, "--isolated", "--no-cache")
    flagged = [f["message"].split("`")[1].lstrip("-") for f in document["findings"] if f["code"] == "TL305"]
    assert flagged == reported


_PTUNING_MAIN = """from dataclasses import dataclass, field
from typing import Optional

from transformers import AutoConfig, AutoModel, HfArgumentParser, Seq2SeqTrainer, Seq2SeqTrainingArguments


@dataclass
class ModelArguments:
    model_name_or_path: str = field(default="THUDM/chatglm-6b")
    pre_seq_len: Optional[int] = field(default=None)


def main():
    parser = HfArgumentParser((ModelArguments, Seq2SeqTrainingArguments))
    model_args, training_args = parser.parse_args_into_dataclasses()
    config = AutoConfig.from_pretrained(model_args.model_name_or_path, trust_remote_code=True)
    config.pre_seq_len = model_args.pre_seq_len
    model = AutoModel.from_pretrained(model_args.model_name_or_path, config=config, trust_remote_code=True)
    trainer = Seq2SeqTrainer(model=model, args=training_args, train_dataset=[])
    trainer.train()


if __name__ == "__main__":
    main()
"""


@pytest.mark.parametrize("prefix, judged", [(" --pre_seq_len 128", False), ("", True)])
def test_p_tuning_v2_trains_a_prefix_over_a_frozen_model(cli, tmp_path, prefix, judged):
    # ChatGLM-6B on one 80 GB card in fp32 with AdamW: as a full fine-tune its states alone overflow.
    launcher = ("CUDA_VISIBLE_DEVICES=0 python main.py --do_train --model_name_or_path THUDM/chatglm-6b "
                f"--output_dir out --max_source_length 700 --per_device_train_batch_size 8{prefix}\n")
    write_tree(tmp_path, {"main.py": _PTUNING_MAIN, "train.sh": launcher})
    _, document = cli.check_json(tmp_path, "--isolated", "--no-cache", "--gpu", "a100-80gb")
    assert any(f["code"] == "TL108" for f in document["findings"]) is judged


_REMAINING = """import transformers
from dataclasses import dataclass, field


@dataclass
class DataArguments:
    data_path: str = field(default="data.json")


def train():
    parser = transformers.HfArgumentParser((DataArguments, transformers.TrainingArguments))
    data_args, training_args, remaining_args = parser.parse_args_into_dataclasses(return_remaining_strings=True)
    {use}
    transformers.Trainer(model=None, args=training_args).train()


if __name__ == "__main__":
    train()
"""


@pytest.mark.parametrize("use, reported", [
    ("data_args.data_length = int(remaining_args[1])", []),  # the script reads what the parser left over
    ("print(remaining_args)", ["data_length"]),  # only shown: the flag has no effect
])
def test_the_remaining_strings_hf_argument_parser_returns_may_be_read(cli, tmp_path, use, reported):
    write_tree(tmp_path, {"train_math.py": _REMAINING.replace("{use}", use),
                          "run.sh": "torchrun --nproc_per_node 8 train_math.py --data_path d.json "
                                    "--data_length 1000 --per_device_train_batch_size 4 --output_dir out\n"})
    _, document = cli.check_json(tmp_path, "--isolated", "--no-cache")
    flagged = [f["message"].split("`")[1].lstrip("-") for f in document["findings"] if f["code"] == "TL305"]
    assert flagged == reported


@pytest.mark.parametrize("devices, judged", [("ASCEND_RT_VISIBLE_DEVICES", False), ("CUDA_VISIBLE_DEVICES", True)])
def test_a_job_on_ascend_npus_is_no_gpu_job(cli, tmp_path, devices, judged):
    # A recipe for a 16-NPU Atlas node: neither its process count nor its memory is about the 8 GPUs given.
    launcher = (f"{devices}=0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15 \\\n"
                "torchrun --nproc_per_node 16 train.py --model_name_or_path lmsys/vicuna-13b-v1.5 --bf16 True "
                "--per_device_train_batch_size 1 --output_dir out\n")
    write_tree(tmp_path, {"train.sh": launcher, "train.py": TRAIN_PY.replace("{eval_dataset}", "None")})
    _, document = cli.check_json(tmp_path, "--isolated", "--no-cache", "--gpu", "a100-80gb", "--num-gpus", "8")
    codes = {f["code"] for f in document["findings"] if f["severity"] == "error"}
    assert bool(codes & {"TL112", "TL108"}) is judged


@pytest.mark.parametrize("own_flag, fp16_from_config", [("--bf16 True", False), ("", True)])
def test_an_accelerate_config_precision_reaches_a_trainer_that_sets_none(cli, tmp_path, own_flag, fp16_from_config):
    # TrainingArguments writes its own bf16/fp16 choice into accelerate's environment: the config's
    # `mixed_precision: fp16` reaches the trainer only when the trainer turns neither on.
    config = "compute_environment: LOCAL_MACHINE\ndistributed_type: FSDP\nmixed_precision: fp16\nnum_processes: 2\n"
    launcher = ("accelerate launch --config_file fsdp_config.yaml train.py --model_name_or_path lmsys/vicuna-7b-v1.5 "
                f"--per_device_train_batch_size 1 --output_dir out {own_flag}\n")
    write_tree(tmp_path, {"fsdp_config.yaml": config, "train.sh": launcher,
                          "train.py": TRAIN_PY.replace("{eval_dataset}", "None")})
    _, document = cli.check_json(tmp_path, "--isolated", "--no-cache")
    assert not [f for f in document["findings"] if f["code"] == "TL202"]
    [run] = scan([tmp_path / "train.sh"], workspace=Workspace(tmp_path)).runs
    assert (run.known("fp16") is True) is fp16_from_config


def test_a_port_adds_no_flag_to_a_launch_whose_entry_path_two_folders_hold(cli, tmp_path):
    # The root's `train.py` takes TrainingArguments, the legacy one refuses every flag it does not define: a batch
    # flag written for the root's would stop the legacy run at its argument parsing.
    hf_script = ("from dataclasses import dataclass\nimport transformers\n\n@dataclass\nclass Args:\n"
                 "    model_name_or_path: str = None\n\n"
                 "parser = transformers.HfArgumentParser((Args, transformers.TrainingArguments))\n"
                 "args, training_args = parser.parse_args_into_dataclasses()\n"
                 "transformers.Trainer(model=None, args=training_args).train()\n")
    write_tree(tmp_path, {
        "train.py": hf_script,
        "legacy/code/train.py": _OWN_ARGS,
        "legacy/code/scripts/train.sh": "deepspeed --include localhost:6 train.py --model nextgpt --stage 1\n",
        "scripts/finetune.sh": "deepspeed --include localhost:2 train.py --model_name_or_path gpt2 "
                               "--per_device_train_batch_size 8 --bf16 True\n",
    })
    code, out, err = cli.run(tmp_path, "fix", "--diff", "--isolated", "--gpu", "rtx4090",
                             "--num-gpus", "2", "--preserve-effective-batch", ".")
    assert "+++ b/scripts/finetune.sh" in out  # the job whose entry is certain is ported
    assert "legacy/code/scripts/train.sh" not in out
