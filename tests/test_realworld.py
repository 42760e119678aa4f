"""Constructs met in public fine-tuning repositories trainlint was not written against (FastChat-,
InternVL-, LLaMA-Factory- and axolotl-style launchers), reproduced in tests/samples/realworld/."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import write_tree
from trainlint.core import SourceKind, Unknown
from trainlint.linter import lint, make_target
from trainlint.resolution import scan
from trainlint.resolution.batch import effective_batch
from trainlint.resolution.workspace import Workspace

SAMPLES = Path(__file__).parent / "samples" / "realworld"


def _runs(folder: Path, *names: str):
    targets = [folder / name for name in names] if names else [folder]
    return scan(targets, workspace=Workspace(folder)).runs


def _run(folder: Path, name: str):
    [run] = _runs(folder, name)
    return run


def _value(run, knob):
    setting = run.settings.get(knob)
    return None if setting is None else setting.value


# ------------------------------------------------------------------------------------- FSDP
def test_hf_fsdp_full_shard_flag_shards_like_zero3():
    run = _run(SAMPLES / "fsdp_vicuna", "run_7b.sh")
    stage = run.settings["zero_stage"]
    assert stage.value == 3 and stage.kind == SourceKind.DERIVED
    assert [s.text for s in stage.via] == ['"full_shard auto_wrap"']
    assert _value(run, "offload_param") != "cpu"
    assert _value(run, "world_size") == 4


def test_hf_fsdp_shard_grad_op_with_offload():
    run = _run(SAMPLES / "fsdp_vicuna", "run_offload.sh")
    assert _value(run, "zero_stage") == 2
    assert _value(run, "offload_param") == "cpu" and _value(run, "offload_optimizer") == "cpu"


def test_eval_data_argument_left_at_none_means_no_eval_dataset():
    run = _run(SAMPLES / "fsdp_vicuna", "run_7b.sh")
    # eval_strategy "steps" is on the command line, but the script's own --eval_data_path is not.
    assert _value(run, "eval_strategy") == "steps"
    assert run.facts.eval_dataset is False


def test_eval_data_argument_set_on_the_command_line_keeps_evaluation(tmp_path):
    source = (SAMPLES / "fsdp_vicuna" / "train.py").read_text()
    write_tree(tmp_path, {"train.py": source, "go.sh": "torchrun --nproc_per_node 2 train.py --eval_strategy steps "
                                                      "--eval_data_path val.json --per_device_train_batch_size 1\n"})
    assert _run(tmp_path, "go.sh").facts.eval_dataset is True


def test_accelerate_fsdp_config_and_recipe_given_to_the_entry_script():
    folder = SAMPLES / "fsdp_accelerate"
    run = _run(folder, "launch.sh")
    assert run.launcher == "accelerate"
    assert _value(run, "per_device_train_batch_size") == 2  # from the recipe the script is handed
    assert _value(run, "max_seq_length") == 1024
    assert _value(run, "world_size") == 4
    assert _value(run, "zero_stage") == 2  # SHARD_GRAD_OP
    assert _value(run, "bits") == 4 and _value(run, "lora") is True
    assert _value(run, "attn_implementation") == "flash_attention_2"  # flash_attn: fa2
    assert effective_batch(run) == 32
    assert not [d for d in run.diagnostics if "not a boolean" in d.message]


def test_a_recipe_run_by_a_launcher_in_the_scan_is_not_a_second_job():
    runs = _runs(SAMPLES / "fsdp_accelerate")
    assert [r.launcher for r in runs] == ["accelerate"]
    # Named by itself, it is still checked on its own.
    [alone] = _runs(SAMPLES / "fsdp_accelerate", "qlora.yaml")
    assert alone.launcher == "llamafactory-cli"


def test_axolotl_fsdp_list_offload_and_derived_defaults():
    run = _run(SAMPLES / "axolotl_recipe", "sharded.yml")
    assert _value(run, "zero_stage") == 3
    assert _value(run, "offload_param") == "cpu"
    assert _value(run, "gradient_checkpointing") is True  # `offload` is checkpointing too
    assert _value(run, "per_device_eval_batch_size") == 2  # eval_batch_size defaults to micro_batch_size
    steps = run.settings["eval_steps"]
    assert steps.value == pytest.approx(1 / 8)  # 1 / (evals_per_epoch 4 × num_epochs 2)
    assert steps.kind == SourceKind.DERIVED
    assert not run.diagnostics


def test_axolotl_fsdp2_without_resharding_is_zero2():
    run = _run(SAMPLES / "axolotl_recipe", "fsdp2.yml")
    assert _value(run, "zero_stage") == 2
    assert _value(run, "num_train_epochs") == 1  # axolotl's default, not HF's 3


def test_deepspeed_config_wins_over_fsdp_words(tmp_path):
    write_tree(tmp_path, {
        "train.py": (SAMPLES / "fsdp_vicuna" / "train.py").read_text(),
        "ds.json": '{"zero_optimization": {"stage": 1}}',
        "go.sh": "deepspeed --num_gpus 2 train.py --deepspeed ds.json --fsdp full_shard\n",
    })
    assert _value(_run(tmp_path, "go.sh"), "zero_stage") == 1


# ------------------------------------------------------------------------- process counts
def test_srun_python_world_size_from_ntasks():
    run = _run(SAMPLES / "slurm_chat", "srun_job.sh")
    assert run.launcher == "python"
    assert _value(run, "world_size") == 32
    assert _value(run, "gradient_accumulation_steps") == 2
    assert effective_batch(run) == 256


def test_srun_without_options_takes_the_sbatch_allocation():
    run = _run(SAMPLES / "slurm_chat", "sbatch_job.slurm")
    assert _value(run, "world_size") == 16


def test_mpirun_np():
    assert _value(_run(SAMPLES / "slurm_chat", "mpi_job.sh"), "world_size") == 4


def test_srun_with_nothing_to_count_is_unknown(tmp_path):
    write_tree(tmp_path, {"finetune.py": (SAMPLES / "slurm_chat" / "finetune.py").read_text(),
                          "go.sh": "srun -p gpu python finetune.py --output_dir o --per_device_train_batch_size 1\n"})
    world = _run(tmp_path, "go.sh").settings["world_size"].value
    assert isinstance(world, Unknown) and "allocation" in world.reason


def test_an_option_whose_value_is_unknown_still_counts():
    world = _run(SAMPLES / "slurm_chat", "elastic_job.sh").settings["world_size"].value
    assert isinstance(world, Unknown) and "node count" in world.reason


# ----------------------------------------------------------------- code gated by an argument
def test_checkpointing_enabled_under_an_argument_that_the_launcher_turns_on():
    run = _run(SAMPLES / "slurm_chat", "srun_job.sh")
    setting = run.settings["gradient_checkpointing"]
    assert setting.value is True and setting.kind == SourceKind.CODE_OVERRIDE
    assert setting.origin.path.endswith("finetune.py")
    assert setting.via and setting.via[0].kind == SourceKind.LAUNCHER_FLAG


def test_checkpointing_branch_skipped_when_the_argument_is_off():
    run = _run(SAMPLES / "slurm_chat", "no_ckpt.sh")
    assert _value(run, "gradient_checkpointing") is False


def test_checkpointing_branch_follows_the_dataclass_default(tmp_path):
    write_tree(tmp_path, {"finetune.py": (SAMPLES / "slurm_chat" / "finetune.py").read_text(),
                          "go.sh": "torchrun --nproc_per_node 2 finetune.py --output_dir o\n"})
    assert _value(_run(tmp_path, "go.sh"), "gradient_checkpointing") is False


def test_negated_gate_and_unknown_gate(tmp_path):
    script = '''
from dataclasses import dataclass, field
import transformers

@dataclass
class Extra:
    slow_mode: bool = field(default=False)

def main():
    parser = transformers.HfArgumentParser((Extra, transformers.TrainingArguments))
    extra, training_args = parser.parse_args_into_dataclasses()
    if not extra.slow_mode:
        model.gradient_checkpointing_enable()
    trainer = transformers.Trainer(model=model, args=training_args)

main()
'''
    write_tree(tmp_path, {"t.py": script,
                          "off.sh": "torchrun --nproc_per_node 1 t.py --output_dir o\n",
                          "on.sh": "torchrun --nproc_per_node 1 t.py --output_dir o --slow_mode True\n",
                          "env.sh": "torchrun --nproc_per_node 1 t.py --output_dir o --slow_mode $SLOW\n"})
    assert _value(_run(tmp_path, "off.sh"), "gradient_checkpointing") is True
    assert _value(_run(tmp_path, "on.sh"), "gradient_checkpointing") is False
    assert isinstance(_value(_run(tmp_path, "env.sh"), "gradient_checkpointing"), Unknown)


# ---------------------------------------------------------------------------- LLaMA-Factory
def test_llamafactory_cli_with_flags_instead_of_a_recipe():
    run = _run(SAMPLES / "lf_cli", "flags_only.sh")
    assert run.launcher == "llamafactory-cli"
    assert _value(run, "per_device_train_batch_size") == 2
    assert _value(run, "max_seq_length") == 4096
    assert _value(run, "bf16") is True and _value(run, "lora") is True
    assert _value(run, "world_size") == 2  # CUDA_VISIBLE_DEVICES=0,1
    assert _value(run, "gradient_checkpointing") is True  # LLaMA-Factory's default
    assert not [d for d in run.diagnostics if d.kind == "missing-file"]


def test_llamafactory_key_value_overrides_beat_the_recipe():
    run = _run(SAMPLES / "lf_cli", "with_overrides.sh")
    batch = run.settings["per_device_train_batch_size"]
    assert batch.value == 1 and batch.kind == SourceKind.LAUNCHER_FLAG
    assert batch.origin.path.endswith("with_overrides.sh") and batch.text == "1"
    assert _value(run, "max_seq_length") == 8192
    assert _value(run, "world_size") == 4  # NPROC_PER_NODE
    assert _value(run, "gradient_accumulation_steps") == 2  # from the recipe


def test_pure_bf16_is_half_precision():
    run = _run(SAMPLES / "lf_cli", "sft.yaml")
    assert _value(run, "bf16") is True and _value(run, "torch_dtype") == "bfloat16"
    assert run.settings["bf16"].kind == SourceKind.DERIVED


@pytest.mark.parametrize("written, expected", [("fa2", "flash_attention_2"), ("sdpa", "sdpa"),
                                                ("disabled", "eager"), ("auto", None), ("True", "flash_attention_2")])
def test_flash_attn_choices(tmp_path, written, expected):
    write_tree(tmp_path, {"r.yaml": f"model_name_or_path: m\nper_device_train_batch_size: 1\nflash_attn: {written}\n"})
    run = _run(tmp_path, "r.yaml")
    assert _value(run, "attn_implementation") == expected
    assert not run.diagnostics


# -------------------------------------------------------------------------------------- TRL
def test_trl_config_subclass_leaves_accepted_flags_open():
    run = _run(SAMPLES / "trl_pref", "run.sh")
    assert run.facts.accepted_flags is None  # `--beta`, `--loss_type` are TRL's, not TrainingArguments'
    assert _value(run, "per_device_train_batch_size") == 2


# ------------------------------------------------------------------ attention set on a config
def test_attention_kernel_assigned_to_a_model_config_in_every_branch(tmp_path):
    script = '''
import transformers

def main():
    parser = transformers.HfArgumentParser((transformers.TrainingArguments,))
    (training_args,) = parser.parse_args_into_dataclasses()
    config = load_config()
    if config.llm_config.model_type == "internlm2":
        config.llm_config.attn_implementation = "flash_attention_2"
    else:
        config.llm_config._attn_implementation = "flash_attention_2"
    trainer = transformers.Trainer(model=build(config), args=training_args)

main()
'''
    mixed = script.replace('_attn_implementation = "flash_attention_2"', '_attn_implementation = "eager"')
    write_tree(tmp_path, {"same.py": script, "mixed.py": mixed,
                          "same.sh": "torchrun --nproc_per_node 1 same.py --output_dir o\n",
                          "mixed.sh": "torchrun --nproc_per_node 1 mixed.py --output_dir o\n"})
    setting = _run(tmp_path, "same.sh").settings["attn_implementation"]
    assert setting.value == "flash_attention_2" and setting.kind == SourceKind.CODE_KEYWORD
    assert "attn_implementation" not in _run(tmp_path, "mixed.sh").settings


def test_an_empty_axolotl_eval_steps_leaves_the_interval_to_evals_per_epoch():
    """`eval_steps:` written with no value is null, and axolotl's normalization sets it from evals_per_epoch:
    a quarter of each epoch here, not every logged step."""
    run = _run(SAMPLES / "axolotl_recipe", "empty_eval_steps.yml")
    assert run.settings["eval_steps"].value == pytest.approx(1 / 12)  # 1 / (evals_per_epoch 4 × num_epochs 3)
    findings = lint([SAMPLES / "axolotl_recipe" / "empty_eval_steps.yml"], make_target("a100-80gb")).findings
    assert not [f for f in findings if f.code == "TL104"]
