"""Constructs met in a fourth round of public fine-tuning repositories (vision-language fine-tuning
launchers and their argument modules), written here in our own words."""
from __future__ import annotations

from pathlib import Path

from tests.conftest import write_tree
from trainlint.core import Unknown
from trainlint.resolution import scan
from trainlint.resolution.workspace import Workspace

_LAUNCH = ("deepspeed --num_gpus 2 train.py --model_id m --output_dir out --per_device_train_batch_size 4 "
           "--gradient_accumulation_steps 2 --learning_rate 1e-5\n")
_TRAIN = """from transformers import HfArgumentParser
from params import ModelArguments, TrainingArguments


def train():
    parser = HfArgumentParser((ModelArguments, TrainingArguments))
    model_args, training_args = parser.parse_args_into_dataclasses()


if __name__ == "__main__":
    train()
"""
_PARAMS = """from dataclasses import dataclass, field
from typing import Optional

{imports}


@dataclass
class ModelArguments:
    model_id: Optional[str] = field(default="m")


@dataclass
class TrainingArguments({base}):
    cache_dir: Optional[str] = field(default=None)
"""


def _run(folder: Path, name: str):
    [run] = scan([folder / name], workspace=Workspace(folder)).runs
    return run


# ------------------------------------------------------------- argument classes with aliased bases
def test_a_dataclass_deriving_from_an_import_alias_of_training_arguments_accepts_hf_flags(tmp_path):
    params = _PARAMS.format(imports="from transformers import TrainingArguments as HFTrainingArguments",
                            base="HFTrainingArguments")
    write_tree(tmp_path, {"run.sh": _LAUNCH, "train.py": _TRAIN, "params.py": params})
    run = _run(tmp_path, "run.sh")
    assert run.facts.accepted_flags is not None
    assert {"output_dir", "per_device_train_batch_size", "model_id", "cache_dir"} <= run.facts.accepted_flags
    assert run.settings["per_device_train_batch_size"].value == 4


def test_an_alias_bound_under_try_and_a_module_alias_are_followed(tmp_path):
    imports = "try:\n    import transformers as tf\nexcept ImportError:\n    raise\n"
    params = _PARAMS.format(imports=imports, base="tf.TrainingArguments")
    write_tree(tmp_path, {"run.sh": _LAUNCH, "train.py": _TRAIN, "params.py": params})
    accepted = _run(tmp_path, "run.sh").facts.accepted_flags
    assert accepted is not None and "gradient_accumulation_steps" in accepted


def test_a_base_from_outside_the_repository_leaves_the_accepted_flags_open(tmp_path):
    params = _PARAMS.format(imports="from mylib.args import BaseArguments", base="BaseArguments")
    write_tree(tmp_path, {"run.sh": _LAUNCH, "train.py": _TRAIN, "params.py": params})
    assert _run(tmp_path, "run.sh").facts.accepted_flags is None  # its fields are unknown: no flag is unknown


def test_no_flag_of_an_aliased_hf_base_is_reported_unknown(cli, tmp_path):
    params = _PARAMS.format(imports="from transformers import TrainingArguments as HFTrainingArguments",
                            base="HFTrainingArguments")
    write_tree(tmp_path, {"run.sh": _LAUNCH.replace("--model_id m", "--model_id m --no_such_flag 1"),
                          "train.py": _TRAIN, "params.py": params})
    _, document = cli.check_json(tmp_path, "--isolated", "--no-cache")
    unknown = [f["message"] for f in document["findings"] if f["code"] == "TL305"]
    assert len(unknown) == 1 and "--no_such_flag" in unknown[0]


# ------------------------------------------------------------- the removal of --evaluation_strategy
def test_evaluation_strategy_is_accepted_up_to_transformers_4_50_and_refused_from_4_51(cli, tmp_path):
    params = _PARAMS.format(imports="import transformers", base="transformers.TrainingArguments")
    write_tree(tmp_path, {"run.sh": _LAUNCH.replace("--model_id m", "--model_id m --evaluation_strategy no"),
                          "train.py": _TRAIN, "params.py": params})
    found = {}
    for pin in ("4.46.0", "4.50.3", "4.51.0"):
        (tmp_path / "requirements.txt").write_text(f"transformers=={pin}\n")
        _, document = cli.check_json(tmp_path, "--isolated", "--no-cache")
        found[pin] = [f["message"] for f in document["findings"] if f["code"] == "TL305"]
    assert found["4.46.0"] == [] and found["4.50.3"] == []
    assert len(found["4.51.0"]) == 1 and "removed from TrainingArguments in transformers 4.51" in found["4.51.0"][0]


# ------------------------------------------------------------- jobs torch_xla runs on TPUs
def test_a_launcher_that_exports_pjrt_device_tpu_is_out_of_the_memory_models_scope(cli, tmp_path):
    params = _PARAMS.format(imports="import transformers", base="transformers.TrainingArguments").replace(
        "model_id", "model_name_or_path")
    launch = ("export PJRT_DEVICE=TPU &&\n"
              "python train.py --model_name_or_path meta-llama/Llama-2-13b-hf --output_dir out "
              "--per_device_train_batch_size 8 --fsdp full_shard --bf16 False\n")
    write_tree(tmp_path, {"run.sh": launch, "train.py": _TRAIN, "params.py": params})
    run = _run(tmp_path, "run.sh")
    assert "TPUs" in run.settings["memory_out_of_scope"].value
    _, document = cli.check_json(tmp_path, "--isolated", "--no-cache", "--gpu", "a100-80gb")
    assert [f["code"] for f in document["findings"] if f["severity"] == "error"] == []
    # The same job on GPUs is judged.
    write_tree(tmp_path, {"run.sh": launch.replace("export PJRT_DEVICE=TPU &&\n", "")})
    _, document = cli.check_json(tmp_path, "--isolated", "--no-cache", "--gpu", "a100-80gb")
    assert any(f["code"] == "TL108" for f in document["findings"])


# ------------------------------------------------------------- a preference trainer under a switch
_TWO_TRAINERS = """import transformers
from transformers import HfArgumentParser, Trainer
from trl import DPOTrainer
from params import ModelArguments, TrainingArguments


def train():
    parser = HfArgumentParser((ModelArguments, TrainingArguments))
    model_args, training_args = parser.parse_args_into_dataclasses()
    model = transformers.AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)
    if training_args.preference:
        trainer = DPOTrainer(model=model, args=training_args, train_dataset=None)
    else:
        trainer = Trainer(model=model, args=training_args, train_dataset=None)
    trainer.train()


if __name__ == "__main__":
    train()
"""


def test_a_preference_trainer_the_script_may_not_build_does_not_double_the_batch(tmp_path):
    params = _PARAMS.format(imports="import transformers", base="transformers.TrainingArguments").replace(
        "model_id", "model_name_or_path").replace("    cache_dir:", "    preference: bool = False\n    cache_dir:")
    launch = ("torchrun --nproc_per_node 8 train.py --model_name_or_path meta-llama/Llama-2-7b-hf --output_dir out "
              "--per_device_train_batch_size 4 --bf16 True\n")
    write_tree(tmp_path, {"run.sh": launch, "train.py": _TWO_TRAINERS, "params.py": params})
    run = _run(tmp_path, "run.sh")
    for knob in ("sequences_per_sample", "reference_model"):
        value = run.settings[knob].value
        assert isinstance(value, Unknown) and "DPOTrainer or Trainer" in str(value)
    # A script that builds only the preference trainer pairs every sample.
    only_dpo = _TWO_TRAINERS.replace("    if training_args.preference:\n", "    if True:\n").replace(
        "        trainer = Trainer(model=model, args=training_args, train_dataset=None)\n", "        pass\n")
    write_tree(tmp_path, {"train.py": only_dpo})
    assert _run(tmp_path, "run.sh").settings["sequences_per_sample"].value == 2


# ------------------------------------------------------------- porting a device list to more GPUs
_DEVICES_LAUNCH = ("deepspeed --include localhost:{devices} train.py --model_id m --output_dir out "
                   "--per_device_train_batch_size {batch} --gradient_accumulation_steps {accum}\n")


def _ported(cli, tmp_path, devices: str, batch: int, accum: int) -> str:
    params = _PARAMS.format(imports="import transformers", base="transformers.TrainingArguments")
    write_tree(tmp_path, {"run.sh": _DEVICES_LAUNCH.format(devices=devices, batch=batch, accum=accum),
                          "train.py": _TRAIN, "params.py": params})
    cli.run(tmp_path, "fix", "--isolated", "--gpu", "a100-80gb", "--num-gpus", "8", "--select", "TL112")
    return (tmp_path / "run.sh").read_text()


def test_a_list_of_the_first_gpus_grows_and_accumulation_keeps_the_global_batch(cli, tmp_path):
    ported = _ported(cli, tmp_path, "0,1,2,3", 4, 8)  # 4 x 8 x 4 = 128
    assert "localhost:0,1,2,3,4,5,6,7 " in ported and "--gradient_accumulation_steps 4\n" in ported


def test_when_accumulation_cannot_absorb_the_factor_the_micro_batch_shrinks(cli, tmp_path):
    ported = _ported(cli, tmp_path, "0,1", 64, 2)  # 64 x 2 x 2 = 256 = 16 x 2 x 8
    assert "localhost:0,1,2,3,4,5,6,7 " in ported
    assert "--per_device_train_batch_size 16 " in ported and "--gradient_accumulation_steps 2\n" in ported


def test_a_list_that_does_not_start_at_the_first_gpu_grows_to_every_gpu_of_the_machine(cli, tmp_path):
    # eight processes on an 8-GPU machine take all eight, whichever four the recipe named
    ported = _ported(cli, tmp_path, "4,5,6,7", 4, 8)  # 4 x 8 x 4 = 128 = 4 x 4 x 8
    assert "localhost:0,1,2,3,4,5,6,7 " in ported and "--gradient_accumulation_steps 4\n" in ported


def test_no_fix_when_the_global_batch_cannot_be_kept_exactly(cli, tmp_path):
    original = _DEVICES_LAUNCH.format(devices="0-2", batch=5, accum=1)  # 5 x 1 x 3 = 15 on 8 GPUs: no way
    assert _ported(cli, tmp_path, "0-2", 5, 1) == original
