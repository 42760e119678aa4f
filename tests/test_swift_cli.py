"""ms-swift's training commands (`swift sft|pt|rlhf`), as its examples and the repositories that document them
write them (tests/samples/swift_cli/)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import write_tree
from tests.test_realworld import _run, _runs, _value
from trainlint.core import Launcher, SourceKind, Unknown
from trainlint.fixers.editors.common import Refused, spelling
from trainlint.linter import lint, make_target
from trainlint.memory import estimate, find_gpu, suggestions
from trainlint.resolution.frameworks.memory_features import FUSED_LOSS, OUT_OF_SCOPE

SAMPLES = Path(__file__).parent / "samples" / "swift_cli"


def test_lora_on_one_gpu_reads_the_flags_and_msswift_defaults():
    run = _run(SAMPLES, "lora_one_gpu.sh")
    assert run.launcher == Launcher.SWIFT and run.entry == "swift sft"
    assert _value(run, "model_name_or_path") == "Qwen/Qwen2.5-7B-Instruct"
    assert _value(run, "per_device_train_batch_size") == 1 and _value(run, "gradient_accumulation_steps") == 16
    assert _value(run, "max_seq_length") == 2048
    assert _value(run, "lora") is True and _value(run, "lora_r") == 8
    assert run.settings["gradient_checkpointing"].kind == SourceKind.FRAMEWORK_DEFAULT
    assert _value(run, "gradient_checkpointing") is True
    assert _value(run, "bf16") is True and run.settings["bf16"].kind == SourceKind.DERIVED  # from torch_dtype
    assert _value(run, "world_size") == 1
    # The second dataset word is a value of `--dataset`, not the command.
    assert not run.diagnostics


def test_lora_estimate_is_near_the_memory_msswift_publishes_for_its_own_example(tmp_path):
    # ms-swift's examples/train/lora_sft.sh, the same job, is commented "22GB" since ms-swift 3.0.0.
    write_tree(tmp_path, {"requirements.txt": "ms-swift==3.0.0\n",
                          "go.sh": (SAMPLES / "lora_one_gpu.sh").read_text()})
    result = estimate(_run(tmp_path, "go.sh"), find_gpu("a100-80gb"))
    assert 22 * 0.9 <= result.peak_gib <= 22 * 1.1
    # From 3.5 the logits are computed where a label is only; unpinned, that lower side is taken.
    unpinned = estimate(_run(SAMPLES, "lora_one_gpu.sh"), find_gpu("a100-80gb"))
    assert unpinned.peak_gib < result.peak_gib and unpinned.breakdown.get("logits", 0.0) < 0.5


def test_nproc_per_node_is_the_process_count_and_a_preset_names_the_zero_settings():
    run = _run(SAMPLES, "full_zero3.sh")
    assert _value(run, "world_size") == 4
    assert _value(run, "lora") is False
    assert _value(run, "zero_stage") == 3 and _value(run, "offload_param") == "cpu"
    assert "zero3_offload" in run.settings["zero_stage"].note
    # zero3_offload moved the optimizer to the CPU only from ms-swift 3.0.1; nothing is pinned here.
    assert isinstance(_value(run, "offload_optimizer"), Unknown)
    assert _value(run, "attn_implementation") == "flash_attention_2"
    assert not [d for d in run.diagnostics if d.kind == "missing-file"]  # a preset is no file


def test_an_offload_that_cannot_be_read_counts_as_on():
    result = estimate(_run(SAMPLES, "full_zero3.sh"), find_gpu("a100-80gb"))
    assert result.breakdown.get("optimizer", 0.0) == 0.0
    assert any("assumed offloaded" in line for line in result.unknowns)


@pytest.mark.parametrize("pin, offloaded", [("3.0.0", "none"), ("4.5.2", "cpu")])
def test_a_pinned_release_says_whether_zero3_offload_offloads_the_optimizer(tmp_path, pin, offloaded):
    write_tree(tmp_path, {"requirements.txt": f"ms-swift=={pin}\n",
                          "go.sh": (SAMPLES / "full_zero3.sh").read_text()})
    assert _value(_run(tmp_path, "go.sh"), "offload_optimizer") == offloaded


@pytest.mark.parametrize("pin, expected", [(None, None), ("3.1.0", 1), ("3.5.3", 4)])
def test_unset_accumulation_follows_the_pinned_release(tmp_path, pin, expected):
    files = {"go.sh": "NPROC_PER_NODE=2 swift sft --model Qwen/Qwen2.5-7B-Instruct --per_device_train_batch_size 2\n"}
    if pin:
        files["requirements.txt"] = f"ms-swift=={pin}\n"
    write_tree(tmp_path, files)
    value = _value(_run(tmp_path, "go.sh"), "gradient_accumulation_steps")
    if expected is None:
        assert isinstance(value, Unknown) and "no release is pinned" in value.reason
    else:
        assert value == expected  # ceil(16 / 2 / 2) from 3.2.2; TrainingArguments' 1 before


def test_one_process_on_several_gpus_spreads_the_model_and_is_not_judged():
    run = _run(SAMPLES, "device_map.sh")
    assert "device_map" in _value(run, OUT_OF_SCOPE)
    assert _value(run, "world_size") == 1
    findings = lint([SAMPLES / "device_map.sh"], make_target(gpu="a100-80gb", num_gpus=8)).findings
    # 72B on one 80 GB card would not fit, but the model is spread over both GPUs; and two GPUs in use by one
    # process are no idle ones a port would fill.
    assert not [f for f in findings if f.code in ("TL101", "TL108", "TL111", "TL112")]


def test_ray_places_its_own_workers(tmp_path):
    write_tree(tmp_path, {"go.sh": "CUDA_VISIBLE_DEVICES=0,1 swift sft --model Qwen/Qwen2.5-7B-Instruct --use_ray true "
                                   "--deepspeed zero2\n"})
    run = _run(tmp_path, "go.sh")
    assert OUT_OF_SCOPE not in run.settings and "device_map_gpus" not in run.settings
    assert isinstance(_value(run, "world_size"), Unknown)


def test_without_nproc_or_visible_devices_the_process_count_is_the_callers(tmp_path):
    write_tree(tmp_path, {"go.sh": "swift sft --model Qwen/Qwen2.5-7B-Instruct --tuner_type full --deepspeed zero3\n"})
    run = _run(tmp_path, "go.sh")
    assert isinstance(_value(run, "world_size"), Unknown)
    assert _value(run, OUT_OF_SCOPE) is not None


def test_preference_training_is_out_of_scope():
    run = _run(SAMPLES, "dpo_full.sh")
    assert "swift rlhf" in _value(run, OUT_OF_SCOPE) and "dpo" in _value(run, OUT_OF_SCOPE)
    findings = lint([SAMPLES / "dpo_full.sh"], make_target(gpu="a100-80gb", num_gpus=4)).findings
    assert not [f for f in findings if f.severity.value == "error"]


def test_no_change_is_proposed_on_an_estimate_out_of_scope():
    run = _run(SAMPLES, "dpo_full.sh")
    assert not estimate(run, find_gpu("a100-40gb")).fits
    assert suggestions(run, find_gpu("a100-40gb")) == []


def test_pinned_2x_reads_its_own_flag_names_and_defaults():
    run = _run(SAMPLES / "pinned", "pretrain.sh")
    assert _value(run, "model_name_or_path") == "Qwen/Qwen2-7B"
    assert _value(run, "per_device_train_batch_size") == 2  # `--batch_size`
    assert _value(run, "lora") is False  # `swift pt` trained the full model before 3.0
    assert _value(run, "max_seq_length") == 2048
    assert _value(run, "zero_stage") == 2
    assert _value(run, "model_type") is None  # a registry key, not a family name
    assert FUSED_LOSS not in run.settings  # no use_logits_to_keep before 3.5


def test_unpinned_pretraining_method_is_unknown(tmp_path):
    write_tree(tmp_path, {"go.sh": "CUDA_VISIBLE_DEVICES=0 swift pt --model Qwen/Qwen2.5-7B --max_length 2048\n"})
    assert isinstance(_value(_run(tmp_path, "go.sh"), "lora"), Unknown)


def test_unset_dtype_is_the_checkpoints_and_the_estimate_says_so(tmp_path):
    command = "CUDA_VISIBLE_DEVICES=0 swift sft --model Qwen/Qwen2.5-7B-Instruct --max_length 2048\n"
    run = _run(write_tree(tmp_path, {"go.sh": command}), "go.sh")
    assert isinstance(_value(run, "torch_dtype"), Unknown) and isinstance(_value(run, "bf16"), Unknown)
    unknowns = estimate(run, find_gpu("rtx4090")).unknowns
    assert any("config.json): assumed 16-bit" in line for line in unknowns)


def test_max_length_unset_is_unknown_from_3_0(tmp_path):
    write_tree(tmp_path, {"go.sh": "CUDA_VISIBLE_DEVICES=0 swift sft --model Qwen/Qwen2.5-7B-Instruct\n"})
    value = _value(_run(tmp_path, "go.sh"), "max_seq_length")
    assert isinstance(value, Unknown) and "maximum length" in value.reason


def test_a_config_named_first_is_read_under_the_flags_with_its_env_block():
    run = _run(SAMPLES / "from_config", "run.sh")
    assert _value(run, "per_device_train_batch_size") == 2  # the flag wins over the file (4.1 on)
    assert _value(run, "gradient_accumulation_steps") == 2 and _value(run, "max_seq_length") == 4096
    assert _value(run, "world_size") == 2  # ENV: NPROC_PER_NODE
    assert _value(run, "zero_stage") == 2
    assert run.recipe.endswith("sft.yaml")


def test_config_flag_keys_win_over_the_flags(tmp_path):
    write_tree(tmp_path, {"c.yaml": "per_device_train_batch_size: 4\nmax_length: 1024\n",
                          "go.sh": "NPROC_PER_NODE=1 swift sft --config c.yaml --per_device_train_batch_size 2 "
                                   "--model Qwen/Qwen2.5-7B-Instruct\n"})
    run = _run(tmp_path, "go.sh")
    assert _value(run, "per_device_train_batch_size") == 4 and _value(run, "max_seq_length") == 1024


def test_a_config_outside_the_tree_is_not_read_and_one_absent_from_it_is_missing(tmp_path):
    write_tree(tmp_path, {"home.sh": "swift sft ~/configs/sft.yaml --per_device_train_batch_size 2\n",
                          "absent.sh": "swift sft configs/sft.yaml --per_device_train_batch_size 2\n"})
    run = _run(tmp_path, "home.sh")
    assert run.recipe.endswith("configs/sft.yaml") and _value(run, "per_device_train_batch_size") == 2
    assert not [d for d in run.diagnostics if d.kind == "missing-file"]  # another checkout on the user's machine
    run = _run(tmp_path, "absent.sh")
    assert run.entry == "swift sft with configs/sft.yaml" and run.recipe is None
    [missing] = [d for d in run.diagnostics if d.kind == "missing-file"]
    assert "configs/sft.yaml" in missing.message and missing.origin.column == 11


def test_other_swift_commands_are_no_jobs():
    assert _runs(SAMPLES, "not_training.sh") == []


# ------------------------------------------------------------------------------------------ ports


def _fix_diff(cli, tmp_path, name: str, *target: str) -> str:
    shutil.copytree(SAMPLES, tmp_path / "repo")
    code, out, err = cli.run(tmp_path / "repo", "fix", name, "--diff", "--unsafe-fixes", *target)
    assert code in (0, 1), err
    return out + err  # the diff, then the summary and what is left to a person


def test_a_port_rewrites_nproc_per_node_and_the_accumulation(cli, tmp_path):
    out = _fix_diff(cli, tmp_path, "ports/full_two_gpus.sh", "--gpu", "a100-80gb", "--num-gpus", "4")
    assert "-NPROC_PER_NODE=2 \\" in out and "+NPROC_PER_NODE=4 \\" in out
    assert "+CUDA_VISIBLE_DEVICES=0,1,2,3 \\" in out  # the device list grows with the count
    assert "+    --gradient_accumulation_steps 4 \\" in out


def test_a_job_that_generates_with_vllm_keeps_its_gpu_count(cli, tmp_path):
    out = _fix_diff(cli, tmp_path, "ports/grpo_colocate.sh", "--gpu", "a100-80gb", "--num-gpus", "2")
    assert "NPROC_PER_NODE=2" not in out
    assert "generates with vLLM" in out


def test_a_job_out_of_the_memory_models_scope_gets_no_change_made_for_memory(cli, tmp_path):
    out = _fix_diff(cli, tmp_path, "dpo_full.sh", "--gpu", "a100-40gb", "--num-gpus", "8")
    assert "+NPROC_PER_NODE=8 \\" in out and "+    --gradient_accumulation_steps 2 \\" in out
    assert "--optim" not in out and "max_length 4096" not in out


def test_lora_is_no_switch_of_msswift(cli, tmp_path):
    # 7B full on two 24 GB cards: the plan that fits trains LoRA, which ms-swift takes as --tuner_type lora.
    out = _fix_diff(cli, tmp_path, "ports/full_two_gpus.sh", "--gpu", "rtx4090", "--num-gpus", "2")
    assert "--lora " not in out and "--use_lora" not in out
    assert "--tuner_type lora" in out  # named in the reason the change is left to a person


def test_msswift_entry_script_started_by_a_launcher_of_its_own(tmp_path):
    # Issue threads show ms-swift's entry scripts started by torchrun or deepspeed directly, from a checkout.
    write_tree(tmp_path, {
        "go.sh": "CUDA_VISIBLE_DEVICES=0,1,2,3 python -m torch.distributed.run --nproc_per_node 4 \\\n"
                 "    /workspace/ms-swift/swift/cli/sft.py --model Qwen/Qwen2.5-7B-Instruct --train_type full \\\n"
                 "    --deepspeed zero3 --max_length 4096\n",
        "module.sh": "CUDA_VISIBLE_DEVICES=0,1 python -m swift.cli.sft --model Qwen/Qwen2.5-7B-Instruct\n"})
    run = _run(tmp_path, "go.sh")
    assert run.entry == "/workspace/ms-swift/swift/cli/sft.py (swift sft)"
    assert _value(run, "world_size") == 4 and _value(run, "zero_stage") == 3 and _value(run, "lora") is False
    assert _value(run, "per_device_train_batch_size") == 1  # ms-swift's default, not TrainingArguments' 8
    assert OUT_OF_SCOPE not in run.settings  # torchrun gives each process its GPU: no device_map
    assert not run.diagnostics  # ms-swift's script, not one the tree lacks
    run = _run(tmp_path, "module.sh")
    # One python process that sees two GPUs spreads the model over them, as `swift sft` without NPROC_PER_NODE.
    assert run.entry == "swift.cli.sft (swift sft)" and "device_map" in _value(run, OUT_OF_SCOPE)
    assert _value(run, "world_size") == 1


@pytest.mark.parametrize("knob, written", [("max_seq_length", "max_length"), ("lora_r", "lora_rank"),
                                           ("per_device_train_batch_size", "per_device_train_batch_size"),
                                           ("optim", "optim"), ("gradient_checkpointing", "gradient_checkpointing")])
def test_a_new_flag_is_spelt_as_msswift_takes_it(knob, written):
    assert spelling(_run(SAMPLES, "lora_one_gpu.sh"), knob) == written


def test_adapters_and_unknown_flags_are_refused_with_msswifts_reason():
    run = _run(SAMPLES, "lora_one_gpu.sh")
    with pytest.raises(Refused, match="--tuner_type lora"):
        spelling(run, "lora")
    with pytest.raises(Refused, match="no ms-swift flag"):
        spelling(run, "fsdp_sharding_strategy")

