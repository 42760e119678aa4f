"""DeepSpeed's own calls in entry scripts: the arguments `deepspeed.add_config_arguments` adds, and the
ZeRO stage, offload and precision a config built in code hands `deepspeed.initialize`."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

from tests.conftest import SAMPLES, write_tree
from trainlint.core import SourceKind, Unknown
from trainlint.readers.python import read_python
from trainlint.readers.python.deepspeed_calls import DEEPSPEED_ARGUMENTS_OWNER, DEEPSPEED_ENGINE_CALLEE
from trainlint.resolution import scan
from trainlint.resolution.workspace import Workspace

DS_CHAT = SAMPLES / "python" / "ds_chat_style"


def _runs(folder: Path, *names: str):
    return scan([folder / name for name in names], workspace=Workspace(folder)).runs


def _sample(tmp_path: Path, launcher: str = "") -> Path:
    """A copy of the DeepSpeed-Chat-style sample, with its launcher replaced when one is given."""
    folder = tmp_path / "ds_chat"
    shutil.copytree(DS_CHAT, folder)
    if launcher:
        (folder / "run_sft.sh").write_text(textwrap.dedent(launcher), encoding="utf-8")
    return folder


def test_add_config_arguments_adds_deepspeeds_switch_and_config_path():
    module = read_python(DS_CHAT / "sft.py")
    added = {arg.name: arg for arg in module.argparse_args if arg.owner == DEEPSPEED_ARGUMENTS_OWNER}
    assert set(added) == {"deepspeed", "deepspeed_config", "deepscale", "deepscale_config", "deepspeed_mpi"}
    assert added["deepspeed_mpi"].type_name == "bool"  # a switch: `--deepspeed_mpi` takes no value
    assert added["deepspeed"].type_name == "bool" and added["deepspeed"].default.value is False
    assert added["deepspeed_config"].type_name == "str" and added["deepspeed_config"].default.value is None
    assert added["deepspeed"].origin.line == 26  # the add_config_arguments call


def test_only_the_trained_engines_config_builder_is_read():
    module = read_python(DS_CHAT / "sft.py")
    engine = {keyword.name: keyword for callee, keyword in module.other_keywords if callee == DEEPSPEED_ENGINE_CALLEE}
    # build_frozen_config(args.offload_frozen_model, ...) feeds an engine without an optimizer: not read.
    assert {name: keyword.reference for name, keyword in engine.items()} == {
        "zero_stage": "zero_stage", "offload": "offload", "dtype": "dtype"}
    assert "build_zero_config(stage=...) as `ds_config`" in engine["zero_stage"].setting.note


def test_a_chat_style_launch_takes_zero_stage_offload_and_precision_from_its_flags(tmp_path):
    [run] = _runs(_sample(tmp_path), "run_sft.sh")
    settings = run.settings
    stage = settings["zero_stage"]
    assert stage.value == 3 and stage.kind == SourceKind.LAUNCHER_FLAG
    assert stage.origin.path.endswith("run_sft.sh") and stage.origin.line == 12
    assert stage.head().text == "3" and stage.head().origin.line == 4  # STAGE=3 in the launcher
    assert "deepspeed.initialize" in stage.note
    assert settings["offload"].value is True and settings["offload"].origin.line == 13
    assert settings["bf16"].value is True and settings["fp16"].value is False
    assert settings["per_device_train_batch_size"].value == 4
    assert settings["gradient_accumulation_steps"].value == 2
    assert settings["max_seq_length"].value == 1024
    assert settings["gradient_checkpointing"].value is True
    assert settings["lora_r"].value == 64
    # `if args.lora_dim > 0: convert_linears_to_lora(...)`: the layers train as LoRA adapters.
    assert settings["lora"].value is True and settings["lora"].kind == SourceKind.CODE_OVERRIDE
    assert settings["model_name_or_path"].value == "meta-llama/Llama-2-7b-hf"
    # `--deepspeed` is DeepSpeed's switch, not a config path; no flag is unknown to the parser.
    assert settings["deepspeed"].value is None
    assert not run.diagnostics
    assert "deepspeed" in run.facts.accepted_flags


def test_without_flags_the_parsers_defaults_decide(tmp_path):
    folder = _sample(tmp_path, "deepspeed --num_gpus 2 sft.py --model_name_or_path facebook/opt-350m --deepspeed\n")
    [run] = _runs(folder, "run_sft.sh")
    settings = run.settings
    assert settings["zero_stage"].value == 0 and settings["zero_stage"].kind == SourceKind.ARGPARSE_DEFAULT
    assert settings["offload"].value is False
    assert settings["fp16"].value is True and settings["bf16"].value is False
    assert "lora" not in settings  # --lora_dim defaults to 0: no adapters


def test_a_precision_the_launcher_leaves_unknown_stays_unknown(tmp_path):
    folder = _sample(tmp_path, "deepspeed --num_gpus 2 sft.py --model_name_or_path m --dtype $DTYPE --deepspeed\n")
    [run] = _runs(folder, "run_sft.sh")
    assert isinstance(run.settings["bf16"].value, Unknown) and isinstance(run.settings["fp16"].value, Unknown)


def test_deepspeed_config_names_the_json_a_script_reads_through_its_arguments(tmp_path):
    entry = textwrap.dedent("""\
        import argparse
        import deepspeed

        parser = argparse.ArgumentParser()
        parser.add_argument("--epochs", type=int, default=1)
        parser = deepspeed.add_config_arguments(parser)
        args = parser.parse_args()
        engine, optimizer, _, _ = deepspeed.initialize(args=args, model=net, model_parameters=net.parameters())
        """)
    config = '{"train_micro_batch_size_per_gpu": 16, "zero_optimization": {"stage": 2}}\n'
    write_tree(tmp_path, {"train.py": entry, "ds_config.json": config,
                          "run.sh": "deepspeed --num_gpus 4 train.py --deepspeed --deepspeed_config ds_config.json "
                                    "--epochs 2\n"})
    [run] = _runs(tmp_path, "run.sh")
    assert run.settings["deepspeed"].value == "ds_config.json"
    assert run.settings["zero_stage"].value == 2 and run.settings["ds_micro_batch"].value == 16
    assert not run.diagnostics


def test_a_flag_the_script_lacks_is_still_reported_next_to_deepspeeds(tmp_path):
    folder = _sample(tmp_path, "deepspeed sft.py --model_name_or_path m --num_padding_at_beginning 1 --deepspeed\n")
    [run] = _runs(folder, "run_sft.sh")
    assert "num_padding_at_beginning" not in run.facts.accepted_flags
    assert "deepspeed" in run.facts.accepted_flags


def test_a_config_name_bound_twice_is_not_guessed(tmp_path):
    entry = textwrap.dedent("""\
        import deepspeed

        def main(args, model, optimizer):
            config = build(stage=args.zero_stage)
            if args.debug:
                config = build(stage=0)
            deepspeed.initialize(model=model, optimizer=optimizer, config=config)
        """)
    path = write_tree(tmp_path, {"train.py": entry}) / "train.py"
    assert not [k for callee, k in read_python(path).other_keywords if callee == DEEPSPEED_ENGINE_CALLEE]


def test_a_parser_built_by_an_unseen_helper_is_not_known_from_deepspeeds_arguments_alone(tmp_path):
    entry = textwrap.dedent("""\
        import deepspeed
        from helpers import make_parser

        parser = make_parser()
        parser = deepspeed.add_config_arguments(parser)
        args = parser.parse_args()
        """)
    write_tree(tmp_path, {"train.py": entry,
                          "run.sh": "deepspeed --num_gpus 2 train.py --bert_model large --deepspeed "
                                    "--per_device_train_batch_size 4\n"})
    [run] = _runs(tmp_path, "run.sh")
    assert run.facts.accepted_flags is None  # the helper's arguments are not seen: no flag is called unknown


def test_a_bare_deepspeed_switch_names_no_config_even_when_the_entry_is_unknown(tmp_path):
    write_tree(tmp_path, {"run.sh": "deepspeed --num_gpus 2 ${BASE}/train.py --deepspeed "
                                    "--deepspeed_config ds.json --max_seq_length 128\n",
                          "ds.json": '{"train_micro_batch_size_per_gpu": 8, "zero_optimization": {"stage": 1}}\n'})
    [run] = _runs(tmp_path, "run.sh")
    assert run.settings["deepspeed"].value == "ds.json" and run.settings["zero_stage"].value == 1
    assert not [d for d in run.diagnostics if d.kind == "missing-file" and "DeepSpeed config" in d.message]


def test_a_scripts_own_deepspeed_switch_is_not_a_config_path(tmp_path):
    entry = textwrap.dedent("""\
        import argparse

        parser = argparse.ArgumentParser()
        parser.add_argument("--deepspeed", action="store_true")
        parser.add_argument("--per_device_train_batch_size", type=int, default=1)
        args = parser.parse_args()
        """)
    write_tree(tmp_path, {"bench.py": entry,
                          "run.sh": "deepspeed --num_gpus 2 bench.py --deepspeed --per_device_train_batch_size 4\n"})
    [run] = _runs(tmp_path, "run.sh")
    assert "deepspeed" not in run.settings and not run.diagnostics


def test_a_parser_extended_by_deepspeed_at_module_level_accepts_its_flags(tmp_path):
    # The statement `parser = deepspeed.add_config_arguments(parser)` sits at module level, where the
    # prefilter decides what libcst reads: the flags it adds must still reach the parser.
    from trainlint.linter import lint, make_target

    shutil.copytree(SAMPLES / "python" / "ds_module_level", tmp_path / "job")
    result = lint([tmp_path / "job"], make_target("a100-80gb", None, 1))
    assert len(result.scan.runs) == 1
    assert [f.message for f in result.findings if f.code in ("TL302", "TL305")] == []


def test_deepspeeds_mpi_switch_is_an_argument_of_the_extended_parser(tmp_path):
    # MPI launches of BERT-style examples pass `--deepspeed_mpi`, which add_config_arguments adds.
    folder = _sample(tmp_path, "deepspeed --launcher=openmpi sft.py --model_name_or_path m --deepspeed "
                               "--deepspeed_mpi --num_padding_at_beginning 1\n")
    [run] = _runs(folder, "run_sft.sh")
    assert "deepspeed_mpi" in run.facts.accepted_flags
    assert "num_padding_at_beginning" not in run.facts.accepted_flags
