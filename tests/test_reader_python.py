"""The Python reader on small entry scripts that mimic real fine-tuning repositories."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, Optional

import pytest

from tests.conftest import read_python_whole
from trainlint.core import Origin, SourceKind, Unknown
from trainlint.readers.facts import DataclassInfo, FieldDefault, PythonModule
from trainlint.readers.python import read_python, resolve_import

SAMPLES = Path(__file__).parent / "samples" / "python"
PROJECT = SAMPLES / "proj"
TRAIN = PROJECT / "vlm" / "train" / "train.py"


def read(name: str) -> PythonModule:
    return read_python(SAMPLES / name)


def dataclass_named(module: PythonModule, name: str) -> DataclassInfo:
    return next(info for info in module.dataclasses if info.name == name)


def fields_of(module: PythonModule, name: str) -> Dict[str, FieldDefault]:
    return {f.name: f for f in dataclass_named(module, name).fields}


def arg_named(module: PythonModule, name: str) -> FieldDefault:
    return next(arg for arg in module.argparse_args if arg.name == name)


def token(path: Path, origin: Optional[Origin]) -> bytes:
    """The raw bytes an origin points at."""
    assert origin is not None
    return path.read_bytes()[origin.start_byte : origin.end_byte]


def span(origin: Optional[Origin]):
    assert origin is not None
    return (origin.line, origin.column, origin.end_line, origin.end_column)


# ---------------------------------------------------------------- dataclasses
@pytest.fixture(scope="module")
def llava_like() -> PythonModule:
    return read_python(TRAIN)


def test_three_dataclasses_with_bases_as_written(llava_like):
    names = [info.name for info in llava_like.dataclasses]
    assert names == ["ModelArguments", "DataArguments", "TrainingArguments"]
    assert dataclass_named(llava_like, "TrainingArguments").bases == ("transformers.TrainingArguments",)
    assert dataclass_named(llava_like, "ModelArguments").bases == ()


def test_model_max_length_default_has_exact_origin(llava_like):
    field = fields_of(llava_like, "TrainingArguments")["model_max_length"]
    default = field.default
    assert default.value == 512
    assert default.kind is SourceKind.DATACLASS_DEFAULT
    assert default.text == "512"
    assert default.note == "TrainingArguments.model_max_length"
    assert span(default.origin) == (40, 17, 40, 20)
    assert token(TRAIN, default.origin) == b"512"
    assert field.type_name == "int"
    assert field.owner == "TrainingArguments"


def test_plain_annotated_defaults_negative_numbers_and_constant_expressions(llava_like):
    model = fields_of(llava_like, "ModelArguments")
    training = fields_of(llava_like, "TrainingArguments")
    assert model["select_layer"].default.value == -2
    assert token(TRAIN, model["select_layer"].default.origin) == b"-2"
    assert model["projector"].default.value == "mlp2x_gelu"
    assert model["vision_tower"].default.value is None
    assert training["mm_max_tokens"].default.value == 4096
    assert training["mm_max_tokens"].default.text == "2048 * 2"
    assert training["learning_floor"].default.value == pytest.approx(-1e-3)
    assert training["lora_enable"].default.value is False
    assert training["lora_r"].default.value == 64


def test_field_calls_default_factory_and_required_fields(llava_like):
    data = fields_of(llava_like, "DataArguments")
    training = fields_of(llava_like, "TrainingArguments")
    assert data["split_name"].default is None  # no default: required
    assert data["manifest"].default is None  # field(metadata=...) only
    assert data["data_path"].default.value is None
    assert token(TRAIN, data["data_path"].default.origin) == b"None"
    # a lambda returning a scalar literal is that literal; anything else stays unknown
    assert training["warmup_tokens"].default.value == 128
    assert token(TRAIN, training["warmup_tokens"].default.origin) == b"128"
    targets = training["lora_targets"].default
    assert isinstance(targets.value, Unknown) and "default_factory" in targets.value.reason
    assert isinstance(training["group_lengths"].default.value, Unknown)


def test_dataclasses_dataclass_and_called_decorator_are_recognised(llava_like):
    # DataArguments uses @dataclasses.dataclass, TrainingArguments @dataclass(frozen=False)
    assert dataclass_named(llava_like, "DataArguments").fields
    assert dataclass_named(llava_like, "TrainingArguments").origin.line == 36


def test_hf_parser_and_main_call(llava_like):
    assert llava_like.hf_parsers == (("ModelArguments", "DataArguments", "TrainingArguments"),)
    assert llava_like.main_calls == ("train",)
    assert llava_like.parse_known_args is False
    assert llava_like.diagnostics == ()


def test_trainer_eval_dataset_none_from_splatted_dict_builder(llava_like):
    (call,) = llava_like.trainer_calls
    assert call.callee == "VLMTrainer"
    assert call.has_splat is True
    assert call.eval_dataset.value is None
    assert call.eval_dataset.origin.line == 58  # the `None` in make_supervised_data_module's dict(...)
    assert token(TRAIN, call.eval_dataset.origin) == b"None"
    assert "make_supervised_data_module" in call.eval_dataset.note
    assert call.compute_metrics is None


def test_input_require_grads_is_not_checkpointing_and_eval_batch_override(llava_like):
    names = [o.name for o in llava_like.overrides]
    assert "gradient_checkpointing" not in names
    (override,) = llava_like.overrides
    assert override.name == "per_device_eval_batch_size"
    assert override.target == "training_args"
    assert override.setting.kind is SourceKind.CODE_OVERRIDE
    assert override.setting.value == Unknown("from training_args.per_device_train_batch_size")
    assert token(TRAIN, override.setting.origin) == b"training_args.per_device_train_batch_size"


def test_model_loading_keywords(llava_like):
    found = {(call, kw.name): kw for call, kw in llava_like.other_keywords}
    assert found[("from_pretrained", "attn_implementation")].setting.value == "flash_attention_2"
    assert found[("from_pretrained", "torch_dtype")].setting.value == "torch.bfloat16"
    lora_r = found[("LoraConfig", "r")]
    assert lora_r.reference == "lora_r" and isinstance(lora_r.setting.value, Unknown)
    assert found[("get_peft_model", "called")].setting.value is True


def test_imports_keep_relative_dots_and_point_at_the_module_name(llava_like):
    by_module = {imp.module: imp for imp in llava_like.imports}
    assert by_module["vlm.train.vlm_trainer"].names == ("VLMTrainer",)
    assert by_module[".helpers"].names == ("rank0_log",)
    assert by_module["..arguments"].names == ("*",)
    assert token(TRAIN, by_module["..arguments"].origin) == b"..arguments"
    assert token(TRAIN, by_module["vlm.train.vlm_trainer"].origin) == b"vlm.train.vlm_trainer"
    assert by_module["peft"].origin.line == 76  # imports inside functions count too


def test_launcher_module_only_imports_and_calls_train():
    module = read_python(PROJECT / "vlm" / "train" / "train_mem.py")
    assert module.main_calls == ("train",)
    assert [imp.module for imp in module.imports] == ["vlm.train.train"]
    assert module.dataclasses == () and module.trainer_calls == ()


# ---------------------------------------------------------------- argparse + TrainingArguments(...)
@pytest.fixture(scope="module")
def argparse_script() -> PythonModule:
    return read("argparse_train.py")


def test_argparse_dest_defaults_and_types(argparse_script):
    eval_iters = arg_named(argparse_script, "eval_iters")
    assert eval_iters.option_strings == ("--eval_iters", "--eval-iters")
    assert eval_iters.owner == "argparse"
    assert eval_iters.type_name == "int"
    assert eval_iters.default.value == 100
    assert eval_iters.default.kind is SourceKind.ARGPARSE_DEFAULT
    assert token(SAMPLES / "argparse_train.py", eval_iters.default.origin) == b"100"
    assert arg_named(argparse_script, "micro_batch_size").default.value is None
    assert arg_named(argparse_script, "global_batch_size").default.value == 256
    assert arg_named(argparse_script, "learning_rate").default.value == pytest.approx(2e-5)
    assert arg_named(argparse_script, "seq_length").default.value == 4096
    assert isinstance(arg_named(argparse_script, "workers").default.value, Unknown)
    assert arg_named(argparse_script, "config_path").default is None


def test_argparse_store_actions_imply_defaults(argparse_script):
    bf16 = arg_named(argparse_script, "bf16")
    assert bf16.default.value is False and bf16.type_name == "bool"
    checkpointing = arg_named(argparse_script, "gradient_checkpointing")
    assert checkpointing.default.value is False
    assert token(SAMPLES / "argparse_train.py", checkpointing.default.origin) == b"'store_true'"
    shuffle = arg_named(argparse_script, "shuffle")  # dest= wins over the option name
    assert shuffle.option_strings == ("--no-shuffle",)
    assert shuffle.default.value is True


def test_parse_known_args_is_noticed(argparse_script):
    assert argparse_script.parse_known_args is True
    assert argparse_script.main_calls == ("main",)


def test_training_arguments_keywords_literals_references_and_negation(argparse_script):
    (config,) = argparse_script.config_calls
    assert config.callee == "TrainingArguments"
    keywords = {kw.name: kw for kw in config.keywords}
    assert keywords["output_dir"].setting.value == "out"
    assert keywords["evaluation_strategy"].setting.value == "steps"
    assert keywords["warmup_ratio"].setting.value == pytest.approx(0.03)
    assert keywords["warmup_ratio"].setting.kind is SourceKind.CODE_KEYWORD
    eval_steps = keywords["eval_steps"]
    assert eval_steps.reference == "eval_iters" and eval_steps.negated is False
    assert eval_steps.setting.value == Unknown("from args.eval_iters")
    assert span(eval_steps.setting.origin) == (51, 24, 51, 39)
    fp16 = keywords["fp16"]
    assert fp16.reference == "bf16" and fp16.negated is True
    assert token(SAMPLES / "argparse_train.py", fp16.setting.origin) == b"not args.bf16"
    assert keywords["per_device_train_batch_size"].reference == "micro_batch_size"
    logging_steps = keywords["logging_steps"]
    assert logging_steps.reference is None
    assert logging_steps.setting.value == Unknown("expression `args.eval_iters // 4`")


def test_keyword_splat_in_config_call_is_noted(argparse_script):
    (config,) = argparse_script.config_calls
    assert "extra" not in {kw.name for kw in config.keywords}
    (diagnostic,) = [d for d in argparse_script.diagnostics if d.kind == "config-call-splat"]
    assert token(SAMPLES / "argparse_train.py", diagnostic.origin) == b"**extra"


def test_trainer_with_explicit_eval_dataset_and_metrics(argparse_script):
    (call,) = argparse_script.trainer_calls
    assert call.callee == "CustomTrainer" and call.has_splat is False
    assert isinstance(call.eval_dataset.value, Unknown)
    assert "valid_data" in call.eval_dataset.value.reason
    assert token(SAMPLES / "argparse_train.py", call.eval_dataset.origin) == b"valid_data"
    assert call.compute_metrics.value is None


def test_argparse_namespace_overrides(argparse_script):
    overrides = {o.name: o for o in argparse_script.overrides}
    accumulation = overrides["gradient_accumulation_steps"]
    assert accumulation.target == "args"
    assert accumulation.setting.value == Unknown("conditional on `args.global_batch_size is not None`")
    assert overrides["lr_floor"].setting.value == 0.0


def test_accelerator_and_dataloader_keywords(argparse_script):
    found = {(call, kw.name): kw for call, kw in argparse_script.other_keywords}
    assert found[("Accelerator", "gradient_accumulation_steps")].setting.value == 4
    assert found[("Accelerator", "mixed_precision")].setting.value == "bf16"
    assert found[("DataLoader", "batch_size")].reference == "micro_batch_size"


# ---------------------------------------------------------------- splatted data modules
def test_splat_dicts_built_in_different_ways():
    module = read("splats.py")
    local_none, maybe_eval, imported, inline = module.trainer_calls
    path = SAMPLES / "splats.py"

    # `eval_dataset = None` in the builder, then dict(eval_dataset=eval_dataset)
    assert local_none.eval_dataset.value is None
    assert span(local_none.eval_dataset.origin) == (10, 20, 10, 24)
    assert token(path, local_none.eval_dataset.origin) == b"None"

    # a dataset or None depending on a flag: unknown, pointing at the dict entry
    assert maybe_eval.callee == "transformers.Seq2SeqTrainer"
    assert isinstance(maybe_eval.eval_dataset.value, Unknown)
    assert "depending on the branch" in maybe_eval.eval_dataset.value.reason
    assert token(path, maybe_eval.eval_dataset.origin) == b"eval_dataset"

    # built in another module: cannot be seen here
    assert imported.has_splat is True and imported.eval_dataset is None

    # a dict literal splatted in place
    assert inline.eval_dataset.value is None and inline.eval_dataset.origin.line == 40
    assert inline.compute_metrics.value == Unknown("expression `metrics_fn`")


# ---------------------------------------------------------------- checkpointing in code
def test_gradient_checkpointing_enable_conditional_and_unconditional():
    module = read("checkpointing.py")
    path = SAMPLES / "checkpointing.py"
    checkpointing = [o for o in module.overrides if o.name == "gradient_checkpointing"]
    # line 9/10 (under `if training_args.gradient_checkpointing:`) and line 12 (`... and flag`) follow the flag
    assert [o.setting.origin.line for o in checkpointing] == [7, 14, 16, 17, 19]
    unconditional, vision, disabled_else, kbit, int8 = checkpointing
    assert unconditional.setting.value is True
    assert unconditional.setting.kind is SourceKind.CODE_OVERRIDE
    assert unconditional.target == "model"
    assert token(path, unconditional.setting.origin).startswith(b"model.gradient_checkpointing_enable(")
    assert span(unconditional.setting.origin) == (7, 5, 7, 96)
    assert vision.setting.value == Unknown("conditional on `model_args.tune_vision`")
    assert vision.target == "model.vision"
    assert disabled_else.setting.value == Unknown("conditional on `not (model_args.tune_vision)`")
    assert kbit.setting.value is True  # prepare_model_for_kbit_training turns it on by default
    assert int8.setting.value is True and int8.target == "model"  # and so does its older name
    others = {o.name: o for o in module.overrides if o.name != "gradient_checkpointing"}
    assert others["max_steps"].setting.value == 10
    assert isinstance(others["eval_steps"].setting.value, Unknown)  # `+=`


# ---------------------------------------------------------------- TRL style
def test_trl_config_single_parser_and_fire_entry():
    module = read("trl_script.py")
    assert module.hf_parsers == (("TrainingArguments",), ("ScriptArguments",))
    assert module.parse_known_args is True  # return_remaining_strings=True drops unknown flags
    assert module.main_calls == ("main",)
    (config,) = module.config_calls
    keywords = {kw.name: kw.setting.value for kw in config.keywords}
    assert config.callee == "SFTConfig"
    assert keywords["per_device_train_batch_size"] == 2
    assert keywords["max_seq_length"] == 2048
    assert keywords["eval_strategy"] == "no"
    assert isinstance(keywords["output_dir"], Unknown)
    assert fields_of(module, "ScriptArguments")["max_seq_length"].default.value == 1536
    assert [call.callee for call in module.trainer_calls] == ["SFTTrainer"]


# ---------------------------------------------------------------- encodings and broken files
def test_non_ascii_text_before_the_value_gives_exact_byte_offsets():
    path = SAMPLES / "unicode_before.py"
    module = read_python(path)
    fields = fields_of(module, "Args")
    max_length = fields["model_max_length"].default
    assert max_length.value == 4096
    assert token(path, max_length.origin) == b"2048*2"
    line = path.read_bytes().split(b"\n")[7]
    prefix = line[: line.index(b"2048*2")]
    assert max_length.origin.line == 8
    assert max_length.origin.column == len(prefix.decode("utf-8")) + 1 == 74
    assert max_length.origin.start_byte == sum(len(l) + 1 for l in path.read_bytes().split(b"\n")[:7]) + len(prefix)
    eval_batch = fields["per_device_eval_batch_size"].default
    assert eval_batch.value == 8
    assert token(path, eval_batch.origin) == b"8"
    assert span(eval_batch.origin) == (9, 58, 9, 59)
    assert fields["emoji"].default.value == "🚀🚀"


def test_non_utf8_file_keeps_exact_byte_offsets():
    path = SAMPLES / "latin1.py"
    module = read_python(path)
    fields = fields_of(module, "Args")
    assert fields["batch"].default.value == 16
    assert token(path, fields["batch"].default.origin) == b"16"
    assert token(path, fields["label"].default.origin) == b'"r\xe9sum\xe9"'
    # a truncated multi-byte sequence before the value
    assert token(path, fields["seq"].default.origin) == b"1024"
    assert fields["seq"].default.origin.column == 33
    assert module.diagnostics == ()


def test_bom_and_crlf_line_endings():
    path = SAMPLES / "bom_crlf.py"
    module = read_python(path)
    (config,) = module.config_calls
    keywords = {kw.name: kw.setting for kw in config.keywords}
    assert keywords["per_device_train_batch_size"].value == 16
    assert token(path, keywords["per_device_train_batch_size"].origin) == b"16"
    assert token(path, keywords["output_dir"].origin) == '"ö"'.encode("utf-8")
    assert keywords["per_device_train_batch_size"].origin.line == 3


def test_syntax_error_is_a_diagnostic_at_the_error():
    path = SAMPLES / "syntax_error.py"
    module = read_python(path)
    (diagnostic,) = module.diagnostics
    assert diagnostic.kind == "syntax-error"
    assert diagnostic.origin.line == 4
    assert diagnostic.origin.column == 38  # the unclosed `(` (after a non-ASCII line)
    assert token(path, diagnostic.origin) == b"("
    assert module.config_calls == ()


def test_empty_file_gives_an_empty_module():
    module = read("empty.py")
    assert module == PythonModule(path=module.path)


def test_missing_and_unreadable_files_pass_the_diagnostic_through(tmp_path):
    missing = read_python(tmp_path / "nope.py")
    assert [d.kind for d in missing.diagnostics] == ["missing-file"]
    binary = tmp_path / "blob.py"
    binary.write_bytes(b"x = 1\x00\x00\x00")
    assert [d.kind for d in read_python(binary).diagnostics] == ["unreadable-file"]
    assert [d.kind for d in read_python(tmp_path).diagnostics] == ["unreadable-file"]


@pytest.mark.parametrize(
    "text",
    [
        "x = (" * 400 + ")" * 400 + "\n",
        "def f(:\n    pass\n",
        "match = 1\nprint(match)\n",
        "TrainingArguments(**{}, fp16=)\n",
        "parser.add_argument()\nparser.add_argument(dest)\nTrainer(**)\n",
        "\r\r\n\n",
        "class A:\n    x: int = field(default_factory=lambda: ())\n@dataclass\nclass B: y: int = 1\n",
    ],
)
def test_odd_inputs_never_raise(tmp_path, text):
    path = tmp_path / "odd.py"
    path.write_text(text, encoding="utf-8", newline="")
    module = read_python(path)
    assert isinstance(module, PythonModule)


@pytest.mark.parametrize(
    "text",
    [
        "x = " + "(" * 5000 + "1" + ")" * 5000 + "\n",
        "x = " + " + ".join(["1"] * 9000) + "\n",
        "flag = " + " and ".join(["a"] * 9000) + "\n",
        "s = " + " ".join(['"a"'] * 9000) + "\n",
        "y = f" + "()" * 9000 + "\n",
    ],
)
def test_very_deep_syntax_is_reported_not_parsed(tmp_path, text):
    # libcst's native parser crashes the interpreter on such input: it must never see it
    path = tmp_path / "deep.py"
    path.write_text(text, encoding="utf-8")
    (diagnostic,) = read_python(path).diagnostics
    assert diagnostic.kind == "unanalysable-python"
    assert diagnostic.origin.line == 1


def test_moderately_deep_expression_is_a_diagnostic_not_a_crash(tmp_path):
    path = tmp_path / "medium.py"
    path.write_text("x = " + "+".join(["1"] * 1500) + "\n", encoding="utf-8")
    assert [d.kind for d in read_python(path).diagnostics] == ["unanalysable-python"]


# ---------------------------------------------------------------- resolve_import
def test_resolve_absolute_imports_from_search_roots():
    roots = [str(SAMPLES / "missing_root"), str(PROJECT)]
    assert resolve_import("vlm.train.train", str(TRAIN), roots) == os.path.normpath(str(TRAIN))
    assert resolve_import("vlm.train", str(TRAIN), roots) == os.path.normpath(
        str(PROJECT / "vlm" / "train" / "__init__.py")
    )
    assert resolve_import("vlm.arguments", str(TRAIN), roots) == os.path.normpath(str(PROJECT / "vlm" / "arguments.py"))
    assert resolve_import("vlm.train.vlm_trainer", str(TRAIN), roots) is None
    assert resolve_import("transformers", str(TRAIN), roots) is None


def test_resolve_relative_imports_from_the_importer():
    assert resolve_import(".helpers", str(TRAIN), []) == os.path.normpath(str(TRAIN.parent / "helpers.py"))
    assert resolve_import("..arguments", str(TRAIN), []) == os.path.normpath(str(PROJECT / "vlm" / "arguments.py"))
    assert resolve_import(".", str(TRAIN), []) == os.path.normpath(str(TRAIN.parent / "__init__.py"))
    assert resolve_import(".nothing", str(TRAIN), [str(PROJECT)]) is None


def test_resolve_rejects_odd_names():
    assert resolve_import("", str(TRAIN), [str(PROJECT)]) is None
    assert resolve_import("vlm/../vlm", str(TRAIN), [str(PROJECT)]) is None
    assert resolve_import("vlm..train", str(TRAIN), [str(PROJECT)]) is None


def test_dataclasses_in_another_module_are_read_there():
    module = read_python(PROJECT / "vlm" / "arguments.py")
    training = fields_of(module, "TrainingArguments")
    assert training["model_max_length"].default.value == 3072
    assert module.hf_parsers == ()


def test_names_bound_from_parse_args_are_parsed_namespaces():
    module = read("namespace.py")
    assert [(o.target, o.name, o.setting.value) for o in module.overrides] == [("cfg", "max_steps", 5)]
    (config,) = module.config_calls
    keywords = {kw.name: kw for kw in config.keywords}
    assert keywords["eval_steps"].reference == "eval_every"
    assert keywords["logging_steps"].reference is None  # `model_config` is not a parsed namespace


def test_keyword_names_are_followed_to_their_one_unconditional_binding():
    path = SAMPLES / "module_constants.py"
    module = read_python(path)
    (call,) = module.config_calls
    keywords = {keyword.name: keyword for keyword in call.keywords}
    # `MICRO_BATCH_SIZE = args.micro_batch`: the parsed argument, which the resolution takes from the launcher.
    assert keywords["per_device_train_batch_size"].reference == "micro_batch"
    # A constant, and a name bound to a constant: the value where it is written.
    assert keywords["num_train_epochs"].setting.value == 3
    assert token(path, keywords["num_train_epochs"].setting.origin) == b"3"
    assert keywords["eval_steps"].setting.value == 100
    assert token(path, keywords["eval_steps"].setting.origin) == b"100"
    # A local bound once in the function that reads it.
    assert keywords["per_device_eval_batch_size"].setting.value == 2
    # Arithmetic, a second binding under a branch, two bindings, a parameter: unknown.
    for name in ("gradient_accumulation_steps", "gradient_checkpointing", "logging_steps", "optim"):
        assert isinstance(keywords[name].setting.value, Unknown), name
    # Only keywords that set a knob are followed (`save_steps` is none).
    assert isinstance(keywords["save_steps"].setting.value, Unknown)
    dtype = dict((keyword.name, keyword) for _callee, keyword in module.other_keywords)["torch_dtype"]
    assert dtype.setting.value == "torch.float16"
    assert module == read_python_whole(path)


def test_a_notebook_source_reads_its_python_and_reports_its_ipython_lines():
    path = Path(__file__).parent / "samples" / "notebook" / "train_notebook.py"
    module = read_python(path)
    assert not any(d.kind == "syntax-error" for d in module.diagnostics)
    unread = [d for d in module.diagnostics if d.kind == "unmodelled-construct"]
    # `%load_ext`, the `!deepspeed` command with its four continuation lines, and the whole `%%bash` cell.
    assert [(d.origin.line, d.origin.end_line) for d in unread] == [(19, 19), (23, 27), (31, 34)]
    assert unread[1].message.startswith("`!deepspeed --num_gpus {num_gpus} \\` is an IPython line")
    assert [info.module for info in module.imports] == ["os"]


def test_a_python_file_with_a_shell_line_is_still_a_syntax_error(tmp_path):
    path = Path(__file__).parent / "samples" / "notebook" / "train_notebook.py"
    # The same text without the notebook header is a Python file: Python's verdict stands.
    copy = tmp_path / "train.py"
    copy.write_text(path.read_text().replace("# Databricks notebook source\n", ""))
    module = read_python(copy)
    assert [d.kind for d in module.diagnostics] == ["syntax-error"]


def test_the_legacy_flash_attention_switch_of_from_pretrained(tmp_path):
    """transformers 4.34 and 4.35 took `use_flash_attention_2=True` where 4.36 on take `attn_implementation`
    (deita's `train_scorers.py`, pinned to 4.35.1): FlashAttention-2, not the eager default of that release."""
    script = tmp_path / "train.py"
    script.write_text("import transformers\n"
                      "model = transformers.AutoModelForCausalLM.from_pretrained(\n"
                      "    'mistralai/Mistral-7B-v0.1', use_flash_attention_2 = True)\n"
                      "other = transformers.AutoModelForCausalLM.from_pretrained('x', use_flash_attention_2=False)\n")
    module = read_python(script)
    found = [kw for call, kw in module.other_keywords if call == "from_pretrained"]
    [flash] = [kw for kw in found if kw.name == "attn_implementation"]  # the False one asks for nothing
    assert flash.setting.value == "flash_attention_2" and flash.setting.written_as == "use_flash_attention_2"
    assert token(script, flash.setting.origin) == b"True"
