"""Constructs met in a fifth round of public fine-tuning repositories (LLaVA derivatives and Chinese
fine-tuning repositories), written here in our own words."""
from __future__ import annotations

from pathlib import Path

from tests.conftest import write_tree
from trainlint.core import Unknown
from trainlint.resolution import scan
from trainlint.resolution.workspace import Workspace


def _run(folder: Path, name: str):
    [run] = scan([folder / name], workspace=Workspace(folder)).runs
    return run


def _findings(cli, folder: Path, code: str):
    _, document = cli.check_json(folder, "--isolated", "--no-cache", "--gpu", "a100-80gb", "--num-gpus", "8")
    return [f for f in document["findings"] if f["code"] == code]


# ------------------------------------------------------------- TRL's PPOConfig before 0.12
_ACCELERATE_YAML = """distributed_type: DEEPSPEED
deepspeed_config:
  deepspeed_config_file: ds.json
num_machines: 1
num_processes: 8
"""
_DS_BF16 = '{"zero_optimization": {"stage": 2}, "bf16": {"enabled": true}, "train_micro_batch_size_per_gpu": "auto"}\n'
_PPO_LAUNCH = ("accelerate launch --config_file acc.yaml ppo.py --model_name m --batch_size 64 "
               "--mini_batch_size 4 --gradient_accumulation_steps 2\n")
_PPO_SCRIPT = """from dataclasses import dataclass, field
from typing import Optional

from transformers import HfArgumentParser
from trl import PPOConfig, PPOTrainer


@dataclass
class Options:
    model_name: Optional[str] = field(default="")
    batch_size: Optional[int] = field(default=32)
    mini_batch_size: Optional[int] = field(default=4)
    gradient_accumulation_steps: Optional[int] = field(default=1)


options = HfArgumentParser(Options).parse_args_into_dataclasses()[0]
config = PPOConfig(
    batch_size=options.batch_size,
    mini_batch_size=options.mini_batch_size,
    gradient_accumulation_steps=options.gradient_accumulation_steps,
    gradient_checkpointing={checkpointing},
    {epochs}=4,
)
trainer = PPOTrainer(config, None, None, None)
"""


def _ppo_tree(tmp_path: Path, epochs: str) -> None:
    write_tree(tmp_path, {"run.sh": _PPO_LAUNCH, "acc.yaml": _ACCELERATE_YAML, "ds.json": _DS_BF16,
                          "ppo.py": _PPO_SCRIPT.format(epochs=epochs, checkpointing="True")})


def test_the_old_ppo_config_brings_no_training_arguments_defaults(tmp_path):
    _ppo_tree(tmp_path, "ppo_epochs")  # a field only the PPOConfig of TRL before 0.12 has
    run = _run(tmp_path, "run.sh")
    assert "optim" not in run.settings  # no TrainingArguments default is assumed
    assert "bf16" not in run.settings or isinstance(run.settings["bf16"].value, Unknown)
    assert "per_device_train_batch_size" not in run.settings


def test_the_old_ppo_config_and_a_bf16_deepspeed_config_are_no_precision_mismatch(cli, tmp_path):
    _ppo_tree(tmp_path, "ppo_epochs")
    assert _findings(cli, tmp_path, "TL202") == []


def test_the_keywords_of_the_old_ppo_config_are_no_trainer_settings(tmp_path):
    _ppo_tree(tmp_path, "ppo_epochs")
    setting = _run(tmp_path, "run.sh").settings.get("gradient_checkpointing")
    assert setting is None or setting.value is not True  # not TrainingArguments' switch


def test_the_ppo_config_built_on_training_arguments_keeps_its_keywords(tmp_path):
    _ppo_tree(tmp_path, "num_ppo_epochs")  # TRL 0.12 on: TrainingArguments underneath
    run = _run(tmp_path, "run.sh")
    assert run.settings["optim"].value == "adamw_torch"  # TrainingArguments' default
    assert run.settings["gradient_checkpointing"].value is True


# ------------------------------------------------------------- a trainer imported under another name
_ALIAS_SCRIPT = """import argparse

from own_trainer import ShardedPPOTrainer as PPOTrainer

parser = argparse.ArgumentParser()
parser.add_argument("--per_device_train_batch_size", type=int, default=2)
args = parser.parse_args()
trainer = PPOTrainer(args)
"""
_OWN_TRAINER = """class ShardedPPOTrainer:
    def __init__(self, args):
        self.args = args
"""


def test_a_trainer_of_the_repository_imported_under_another_name_is_its_own(tmp_path):
    write_tree(tmp_path, {"run.sh": "torchrun --nproc_per_node 8 train.py --per_device_train_batch_size 2\n",
                          "train.py": _ALIAS_SCRIPT, "own_trainer.py": _OWN_TRAINER})
    run = _run(tmp_path, "run.sh")
    assert "optim" not in run.settings  # no TrainingArguments default is assumed


# ------------------------------------------------------------- a DeepSpeed config that is not there
_HF_SCRIPT = """from transformers import HfArgumentParser, TrainingArguments

args = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses()[0]
"""


def test_a_missing_deepspeed_config_leaves_the_zero_stage_unknown_not_none(cli, tmp_path):
    write_tree(tmp_path, {
        "run.sh": ("deepspeed --num_gpus 8 train.py --deepspeed ./configs/zero3.json --model_name_or_path "
                   "meta-llama/Llama-2-70b-hf --per_device_train_batch_size 1 --bf16 True\n"),
        "train.py": _HF_SCRIPT})
    assert isinstance(_run(tmp_path, "run.sh").settings["zero_stage"].value, Unknown)
    assert len(_findings(cli, tmp_path, "TL302")) == 1  # the config is reported missing
    assert all("without ZeRO" not in f["message"] for f in _findings(cli, tmp_path, "TL108"))


# ------------------------------------------------------------- a `cd` into a directory not known
_CD_LAUNCH = """cd "${{PROJECT_ROOT}}/src/"
deepspeed {entry} --deepspeed ds_config.json --per_device_train_batch_size 2 --gradient_accumulation_steps 4
"""


def test_files_named_after_a_cd_into_an_unknown_directory_are_unknown_not_missing(cli, tmp_path):
    write_tree(tmp_path, {"scripts/run.sh": _CD_LAUNCH.format(entry="main.py"), "src/main.py": _HF_SCRIPT,
                          "src/ds_config.json": '{"zero_optimization": {"stage": 2}}\n'})
    assert _findings(cli, tmp_path, "TL302") == []
    run = _run(tmp_path, "scripts/run.sh")
    assert isinstance(run.settings["zero_stage"].value, Unknown)


def test_a_module_entry_after_a_cd_into_an_unknown_directory_is_unknown(cli, tmp_path):
    launch = ('cd "$PROJECT_ROOT/src"\n'
              "torchrun --nproc_per_node 8 -m pkg.train --per_device_train_batch_size 2\n")
    write_tree(tmp_path, {"scripts/run.sh": launch, "pkg/__init__.py": "", "pkg/other.py": _HF_SCRIPT})
    assert _findings(cli, tmp_path, "TL302") == []
    write_tree(tmp_path, {"scripts/run.sh": launch.split("\n", 1)[1]})
    assert len(_findings(cli, tmp_path, "TL302")) == 1  # from the folder trainlint knows, it is missing


def test_without_the_cd_the_same_files_are_missing(cli, tmp_path):
    launch = _CD_LAUNCH.format(entry="main.py").split("\n", 1)[1]
    write_tree(tmp_path, {"scripts/run.sh": launch, "src/main.py": _HF_SCRIPT})
    messages = sorted(f["message"] for f in _findings(cli, tmp_path, "TL302"))
    assert len(messages) == 2 and "entry script `main.py`" in messages[1]


def test_a_recipe_in_the_home_folder_is_unknown_not_missing(cli, tmp_path):
    write_tree(tmp_path, {"run.sh": "llamafactory-cli train ~/recipes/sft.yaml\n"})
    assert _findings(cli, tmp_path, "TL302") == []


def test_a_cd_into_a_folder_and_back_out_leaves_the_directory_known(cli, tmp_path):
    launch = ('if [ "$1" == "one" ]; then\n  cd eval/one\n  python score.py\n  cd ../..\nfi\n'
              "torchrun --nproc_per_node 8 gone.py --per_device_train_batch_size 2\n")
    write_tree(tmp_path, {"eval.sh": launch, "eval/one/score.py": "print(1)\n"})
    assert len(_findings(cli, tmp_path, "TL302")) == 1  # back where it started: `gone.py` is missing


# ------------------------------------------------------------- arrays built from an unquoted unknown expansion
_ARRAY_LAUNCH = """DEVICES="0,1"
LIST=({element})
torchrun --nproc_per_node=${{#LIST[@]}} train.py --per_device_train_batch_size 2
"""


def test_an_array_of_an_unquoted_unknown_expansion_has_an_unknown_length(cli, tmp_path):
    write_tree(tmp_path, {"run.sh": _ARRAY_LAUNCH.format(element="$(list_devices)"), "train.py": _HF_SCRIPT})
    assert isinstance(_run(tmp_path, "run.sh").settings["world_size"].value, Unknown)
    assert _findings(cli, tmp_path, "TL112") == []  # not "1 GPU"


def test_an_array_of_a_quoted_unknown_expansion_has_one_element(tmp_path):
    write_tree(tmp_path, {"run.sh": _ARRAY_LAUNCH.format(element='"$(list_devices)"'), "train.py": _HF_SCRIPT})
    assert _run(tmp_path, "run.sh").settings["world_size"].value == 1


def test_elements_after_an_unquoted_unknown_expansion_are_unknown(tmp_path):
    launch = ("LIST=(a $(list_devices) 4)\n"
              "torchrun --nproc_per_node=${LIST[2]} train.py --per_device_train_batch_size 2\n")
    write_tree(tmp_path, {"run.sh": 'DEVICES="0,1"\n' + launch, "train.py": _HF_SCRIPT})
    assert isinstance(_run(tmp_path, "run.sh").settings["world_size"].value, Unknown)


# ------------------------------------------------------------- bash pattern substitution with a literal pattern
def test_a_pattern_substitution_splits_a_device_list_into_its_count(tmp_path):
    write_tree(tmp_path, {"run.sh": _ARRAY_LAUNCH.format(element="${DEVICES//,/ }"), "train.py": _HF_SCRIPT})
    assert _run(tmp_path, "run.sh").settings["world_size"].value == 2


def _model_path(tmp_path: Path, expansion: str):
    launch = f'M="org/model-7b"\ntorchrun train.py --model_name_or_path {expansion} --per_device_train_batch_size 2\n'
    write_tree(tmp_path, {"run.sh": launch, "train.py": _HF_SCRIPT})
    return _run(tmp_path, "run.sh").settings["model_name_or_path"].value


def test_literal_pattern_substitutions_are_computed(tmp_path):
    assert _model_path(tmp_path, "${M//\\//_}") == "org_model-7b"  # every `/` (escaped in the pattern)
    assert _model_path(tmp_path, "${M/o/0}") == "0rg/model-7b"  # the first match only
    assert _model_path(tmp_path, '"${M//-/ }"') == "org/model 7b"
    assert _model_path(tmp_path, "${M/7b}") == "org/model-"  # no string: the match is deleted


def test_a_pattern_with_a_wildcard_or_a_special_replacement_stays_unknown(tmp_path):
    assert isinstance(_model_path(tmp_path, "${M//[a-z]/x}"), Unknown)
    assert isinstance(_model_path(tmp_path, "${M//o/&&}"), Unknown)  # `&` is the match in bash 5.2
    assert isinstance(_model_path(tmp_path, "${M//o/$X}"), Unknown)


# ------------------------------------------------------------- a process count beside a device list
_VISIBLE_LAUNCH = ("CUDA_VISIBLE_DEVICES={devices} torchrun --nproc_per_node 2 train.py "
                   "--per_device_train_batch_size 4 --gradient_accumulation_steps 8\n")


def _ported_count(cli, tmp_path: Path, devices: str) -> str:
    write_tree(tmp_path, {"run.sh": _VISIBLE_LAUNCH.format(devices=devices), "train.py": _HF_SCRIPT})
    cli.run(tmp_path, "fix", "--isolated", "--unsafe-fixes", "--gpu", "a100-80gb", "--num-gpus", "8",
            "--select", "TL112")
    return (tmp_path / "run.sh").read_text()


def test_a_list_of_other_devices_grows_to_every_gpu_of_the_machine(cli, tmp_path):
    # 8 processes on the 2 GPUs the list names would not start; on an 8-GPU machine they take all 8, whichever
    # two the recipe's author had
    ported = _ported_count(cli, tmp_path, "2,3")
    assert ported.startswith("CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 ") and "--nproc_per_node 8 " in ported


def test_a_list_of_the_first_devices_grows_with_the_process_count(cli, tmp_path):
    ported = _ported_count(cli, tmp_path, "0,1")
    assert ported.startswith("CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 ") and "--nproc_per_node 8 " in ported
    assert "--gradient_accumulation_steps 2\n" in ported  # 4 x 8 x 2 = 4 x 2 x 8


def test_a_process_count_within_the_visible_devices_is_raised_keeping_the_global_batch(cli, tmp_path):
    ported = _ported_count(cli, tmp_path, "0,1,2,3,4,5,6,7")  # 4 x 8 x 2 = 64 = 4 x 2 x 8
    assert "--nproc_per_node 8 " in ported and "--gradient_accumulation_steps 2\n" in ported


def test_files_named_after_a_cd_into_the_scripts_own_folder_are_read_there(cli, tmp_path):
    # `cd "$(dirname "${BASH_SOURCE[0]}")/../src/"` is known: the entry script and its DeepSpeed config are read.
    launch = _CD_LAUNCH.replace("${{PROJECT_ROOT}}", '$(dirname "${{BASH_SOURCE[0]}}")/..')
    write_tree(tmp_path, {"scripts/run.sh": launch.format(entry="main.py"), "src/main.py": _HF_SCRIPT,
                          "src/ds_config.json": '{"zero_optimization": {"stage": 2}}\n'})
    assert _run(tmp_path, "scripts/run.sh").settings["zero_stage"].value == 2
    write_tree(tmp_path, {"scripts/run.sh": launch.format(entry="gone.py")})
    assert len(_findings(cli, tmp_path, "TL302")) == 1
