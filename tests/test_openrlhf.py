"""OpenRLHF's SFT, reward-model and preference commands: their options as knobs, each at the flag in the launch's
here-doc or at the default the entry script declares, and the accumulation OpenRLHF derives from the global batch."""
from __future__ import annotations

from tests.conftest import SAMPLES
from trainlint.core import SourceKind, Unknown
from trainlint.resolution import scan
from trainlint.resolution.frameworks.openrlhf import command_of
from trainlint.resolution.workspace import Workspace

FOLDER = SAMPLES / "openrlhf"
LEGACY = SAMPLES / "openrlhf_legacy"


def _run(folder, script):
    [run] = scan([folder / script], workspace=Workspace(folder)).runs
    return run


def test_dotted_options_in_a_here_doc_become_knobs_at_their_flags():
    run = _run(FOLDER, "scripts/sft_heredoc.sh")
    micro = run.settings["per_device_train_batch_size"]
    assert micro.value == 2 and micro.kind == SourceKind.LAUNCHER_FLAG
    assert micro.origin.path.endswith("scripts/sft_heredoc.sh") and micro.origin.line == 9
    assert run.settings["global_batch_size"].value == 128
    assert run.settings["max_seq_length"].value == 4096
    assert run.settings["model_name_or_path"].value == "Qwen/Qwen2.5-7B"
    assert run.settings["offload_optimizer"].value == "cpu"
    assert run.settings["gradient_checkpointing"].value is True  # the `if args.model.gradient_...:` branch runs
    assert run.settings["bf16"].value is True and run.settings["fp16"].value is False
    assert run.settings["lora"].value is False


def test_the_accumulation_is_the_global_batch_over_micro_batch_and_world_size():
    run = _run(FOLDER, "scripts/sft_heredoc.sh")
    accumulation = run.settings["gradient_accumulation_steps"]
    assert accumulation.value == 128 // (2 * 4) and accumulation.kind == SourceKind.DERIVED
    assert {str(s.value) for s in accumulation.via} >= {"128", "2", "4"}


def test_an_option_the_launch_leaves_out_is_the_scripts_argparse_default():
    run = _run(FOLDER, "scripts/sft_heredoc.sh")
    stage = run.settings["zero_stage"]
    assert stage.value == 3 and stage.kind == SourceKind.ARGPARSE_DEFAULT
    assert stage.origin.path.endswith("openrlhf/cli/train_sft.py")


def test_dpo_pairs_answers_and_keeps_a_reference_and_an_unknown_world_leaves_accumulation_unknown():
    run = _run(FOLDER, "scripts/dpo_heredoc.sh")
    assert run.settings["sequences_per_sample"].value == 2
    assert run.settings["reference_model"].value is True
    assert run.settings["fp16"].value is True and run.settings["bf16"].value is False
    assert run.settings["zero_stage"].value == 2
    assert run.settings["global_batch_size"].kind == SourceKind.ARGPARSE_DEFAULT
    accumulation = run.settings["gradient_accumulation_steps"].value
    assert isinstance(accumulation, Unknown) and "world size" in accumulation.reason


def test_flat_option_names_of_earlier_releases():
    run = _run(LEGACY, "scripts/train_kto.sh")
    assert run.settings["per_device_train_batch_size"].value == 1
    assert run.settings["gradient_accumulation_steps"].value == 64 // (1 * 8)
    assert run.settings["zero_stage"].value == 3
    assert run.settings["max_seq_length"].value == 2048
    assert run.settings["model_name_or_path"].value == "mistralai/Mistral-7B-v0.1"
    assert run.settings["reference_model"].value is True
    assert "sequences_per_sample" not in run.settings
    # Without --bf16 the checkpoint's own dtype loads: unknown, not fp32.
    assert isinstance(run.settings["bf16"].value, Unknown)


def test_commands_are_recognised_by_module_and_ppo_is_left_out():
    assert command_of("openrlhf.cli.train_rm", True) == "train_rm"
    assert command_of("openrlhf/cli/train_dpo.py", False) == "train_dpo"
    assert command_of("openrlhf.cli.train_ppo_ray", True) is None
    assert command_of("train_sft.py", False) is None
