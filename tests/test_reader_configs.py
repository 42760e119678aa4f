"""JSON (DeepSpeed / HF config.json) and YAML (LLaMA-Factory, axolotl, accelerate) config readers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trainlint.core import SourceKind
from trainlint.readers.deepspeed import read_json_config
from trainlint.readers.facts import ConfigFile
from trainlint.readers.yaml import read_yaml_config

SAMPLES = Path(__file__).parent / "samples" / "configs"


def span(config: ConfigFile, key: str):
    origin = config.values[key].origin
    return (origin.line, origin.column, origin.end_line, origin.end_column, origin.start_byte, origin.end_byte)


def assert_origins_hold_their_text(config: ConfigFile, path: Path) -> None:
    """Every value's byte span in the raw file is exactly the token text it reports."""
    data = path.read_bytes()
    for key, setting in config.values.items():
        written = data[setting.origin.start_byte : setting.origin.end_byte].decode("utf-8", errors="replace")
        assert written == setting.text, key
        assert setting.note == key
        assert setting.kind is SourceKind.CONFIG_FILE


def crlf_copy(sample: str, tmp_path: Path) -> Path:
    target = tmp_path / sample
    target.write_bytes((SAMPLES / sample).read_bytes().replace(b"\n", b"\r\n"))
    return target


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    target = tmp_path / name
    target.write_bytes(data)
    return target


def kinds(config: ConfigFile):
    return [diagnostic.kind for diagnostic in config.diagnostics]


# ================================================================ JSON
class TestDeepSpeedJson:
    def test_values_types_and_origins_in_a_file_without_trailing_newline(self):
        path = SAMPLES / "ds_zero2_own_optimizer.json"
        assert not path.read_bytes().endswith(b"\n")
        config = read_json_config(path)

        assert config.format == "json" and config.diagnostics == ()
        values = {key: setting.value for key, setting in config.values.items()}
        assert values["zero_optimization.stage"] == 2
        assert values["zero_optimization.offload_optimizer.device"] == "none"
        assert values["zero_optimization.offload_optimizer.pin_memory"] is True
        assert values["train_micro_batch_size_per_gpu"] == "auto"
        assert values["optimizer.type"] == "AdamW"
        assert values["scheduler.params.warmup_num_steps"] == 100
        assert values["optimizer.params.betas.1"] == 0.999
        assert values["wall_clock_breakdown"] is False
        assert values["comms_logger"] is None
        assert isinstance(values["fp16.loss_scale"], int)
        assert isinstance(values["optimizer.params.lr"], float) and values["optimizer.params.lr"] == 2e-5
        assert isinstance(values["zero_optimization.allgather_bucket_size"], float)
        assert values["zero_optimization.allgather_bucket_size"] == 5e8
        assert isinstance(values["gradient_clipping"], float)

        stage = config.values["zero_optimization.stage"]
        assert (stage.text, span(config, "zero_optimization.stage")) == ("2", (17, 14, 17, 15, 407, 408))
        device = config.values["zero_optimization.offload_optimizer.device"]
        assert device.text == '"none"'  # the origin covers the quotes
        assert span(config, "zero_optimization.offload_optimizer.device") == (18, 37, 18, 43, 446, 452)
        assert span(config, "comms_logger") == (28, 19, 28, 23, 775, 779)  # last value before EOF
        key = config.key_origins["zero_optimization.stage"]
        assert (key.line, key.column, key.end_column) == (17, 5, 12)
        assert "zero_optimization" in config.key_origins
        assert_origins_hold_their_text(config, path)

    def test_comments_trailing_commas_and_multibyte_text_are_tolerated(self):
        path = SAMPLES / "ds_zero3_commented.json"
        config = read_json_config(path)

        # Read as written, but flagged once: json.load (DeepSpeed, transformers) would reject the file.
        assert kinds(config) == ["non-standard-json"]
        assert "4 comments and 5 trailing commas" in config.diagnostics[0].message
        assert config.diagnostics[0].origin.line == 1
        assert config.values["zero_optimization.stage"].value == 3
        assert config.values["zero_optimization.stage3_prefetch_bucket_size"].value == "auto"
        # Written outside zero_optimization: read where it is, not where it belongs.
        assert config.values["offload_optimizer.device"].value == "cpu"
        assert "zero_optimization.offload_optimizer.device" not in config.values
        assert [k for k in config.values if k.startswith("tags.")] == ["tags.0", "tags.1"]
        # Line 1 is a comment holding "é" (2 bytes) and "—" (3 bytes): bytes run 3 ahead of characters.
        assert span(config, "bf16.enabled") == (4, 23, 4, 27, 135, 139)
        # Columns count characters, byte offsets count bytes, on a line with "é" twice.
        assert config.values["run_name"].value == "essai-réglé"
        assert span(config, "run_name") == (17, 15, 17, 28, 515, 530)
        assert span(config, "seed") == (17, 38, 17, 40, 540, 542)
        assert_origins_hold_their_text(config, path)

    def test_crlf_file_keeps_lines_and_counts_the_carriage_returns(self, tmp_path):
        lf = read_json_config(SAMPLES / "ds_zero3_commented.json")
        path = crlf_copy("ds_zero3_commented.json", tmp_path)
        crlf = read_json_config(path)

        assert kinds(crlf) == ["non-standard-json"]
        assert {k: s.value for k, s in crlf.values.items()} == {k: s.value for k, s in lf.values.items()}
        for key, setting in crlf.values.items():
            before = lf.values[key].origin
            after = setting.origin
            assert (after.line, after.column, after.end_column) == (before.line, before.column, before.end_column)
            assert after.start_byte == before.start_byte + before.line - 1
        assert_origins_hold_their_text(crlf, path)

    def test_syntax_errors_are_diagnosed_and_the_rest_is_kept(self):
        config = read_json_config(SAMPLES / "ds_broken.json")

        assert kinds(config) == ["syntax-error", "syntax-error"]
        missing_comma, missing_value = config.diagnostics
        assert (missing_comma.origin.line, missing_comma.origin.column) == (3, 5)
        assert "missing ','" in missing_comma.message
        assert (missing_value.origin.line, missing_value.origin.column) == (7, 33)
        assert config.values["zero_optimization.stage"].value == 2
        assert config.values["zero_optimization.overlap_comm"].value is True
        assert config.values["train_micro_batch_size_per_gpu"].value == 16
        assert "gradient_accumulation_steps" not in config.values
        assert "gradient_accumulation_steps" in config.key_origins

    def test_duplicate_keys_last_wins_like_json(self):
        path = SAMPLES / "ds_duplicate_keys.json"
        config = read_json_config(path)
        reference = json.loads(path.read_text())

        assert config.values["zero_optimization.stage"].value == reference["zero_optimization"]["stage"] == 3
        assert "zero_optimization.overlap_comm" not in config.values  # the whole first object lost
        assert config.values["train_micro_batch_size_per_gpu"].value == 2
        assert kinds(config) == ["duplicate-key", "duplicate-key"]
        assert [d.origin.line for d in config.diagnostics] == [4, 5]
        assert config.key_origins["train_micro_batch_size_per_gpu"].line == 5

    def test_hf_model_config(self):
        config = read_json_config(SAMPLES / "hf_model_config.json")
        assert config.diagnostics == ()
        assert config.values["architectures.0"].value == "LlamaForCausalLM"
        assert config.values["hidden_size"].value == 4096
        assert config.values["rms_norm_eps"].value == 1e-5
        assert config.values["rope_scaling"].value is None
        assert config.values["name"].value == "café model"  # \u escapes decoded
        assert config.values["name"].text == '"caf\\u00e9 model"'

    def test_plus_signed_exponents_are_single_numbers(self, tmp_path):
        # tree-sitter-json 0.24 splits `1e+2`; the reader glues it back together.
        path = write(tmp_path, "ds.json", b'{"a": -1.5e+10, "b": [2E+3], "c": {"d": 1e+2}}')
        config = read_json_config(path)
        assert config.diagnostics == ()
        assert config.values["a"].value == -1.5e10 and config.values["a"].text == "-1.5e+10"
        assert config.values["b.0"].value == 2000.0
        assert span(config, "c.d") == (1, 41, 1, 45, 40, 44)

    def test_garbage_after_a_value_is_still_an_error(self, tmp_path):
        config = read_json_config(write(tmp_path, "ds.json", b'{"a": "x"e+5, "b": 1}'))
        assert "syntax-error" in kinds(config)
        assert config.values["b"].value == 1

    @pytest.mark.parametrize(
        "data, fragment",
        [
            (b"", "empty"),
            (b"  // just a comment\n", "empty"),
            (b"[1, 2]", "array"),
            (b'"zero3"', "string"),
        ],
    )
    def test_top_level_that_is_not_an_object(self, tmp_path, data, fragment):
        config = read_json_config(write(tmp_path, "ds.json", data))
        errors = [d for d in config.diagnostics if d.kind == "syntax-error"]
        assert len(errors) == 1 and fragment in errors[0].message
        assert config.values == {}

    def test_second_top_level_object_is_reported(self, tmp_path):
        config = read_json_config(write(tmp_path, "ds.json", b'{"a": 1}\n{"b": 2}\n'))
        assert list(config.values) == ["a"] and kinds(config) == ["syntax-error"]
        assert config.diagnostics[0].origin.line == 2

    def test_truncated_file_does_not_raise(self, tmp_path):
        config = read_json_config(write(tmp_path, "ds.json", b'{"zero_optimization": {"stage": 3, "offload'))
        assert "syntax-error" in kinds(config)

    def test_binary_missing_and_directory(self, tmp_path):
        binary = read_json_config(write(tmp_path, "ds.json", b'\x00\x01{"stage": 3}'))
        assert kinds(binary) == ["unreadable-file"] and binary.values == {}
        missing = read_json_config(tmp_path / "absent.json")
        assert kinds(missing) == ["missing-file"] and missing.format == "json"
        assert kinds(read_json_config(tmp_path)) == ["unreadable-file"]

    def test_invalid_utf8_keeps_byte_offsets(self, tmp_path):
        path = write(tmp_path, "ds.json", b'{"n": "x\xffy", "stage": 2}')
        config = read_json_config(path)
        assert config.values["stage"].value == 2
        assert span(config, "stage") == (1, 23, 1, 24, 22, 23)
        assert_origins_hold_their_text(config, path)

    def test_deep_nesting_is_bounded(self, tmp_path):
        depth = 5000
        config = read_json_config(write(tmp_path, "ds.json", b'{"a":' * depth + b"1" + b"}" * depth))
        assert "unreadable-file" in kinds(config)


json_scalars = st.one_of(
    st.booleans(),
    st.none(),
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
)
json_keys = st.text(
    alphabet=st.characters(blacklist_characters=".", blacklist_categories=("Cs",)), min_size=1, max_size=6
)
json_documents = st.dictionaries(
    json_keys,
    st.recursive(
        json_scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(json_keys, inner, max_size=3),
        max_leaves=8,
    ),
    max_size=5,
)


def flatten_reference(value, prefix=""):
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = ((str(index), item) for index, item in enumerate(value))
    else:
        return {prefix: value}
    out = {}
    for key, item in items:
        out.update(flatten_reference(item, f"{prefix}.{key}" if prefix else key))
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(document=json_documents, indent=st.sampled_from([None, 2]), ascii_only=st.booleans())
def test_json_reader_agrees_with_json_module(tmp_path, document, indent, ascii_only):
    path = tmp_path / "generated.json"
    path.write_text(json.dumps(document, indent=indent, ensure_ascii=ascii_only), encoding="utf-8")
    config = read_json_config(path)
    assert config.diagnostics == ()
    got = {key: setting.value for key, setting in config.values.items()}
    expected = flatten_reference(document)
    assert got == expected
    assert {key: type(value) for key, value in got.items()} == {key: type(value) for key, value in expected.items()}
    assert_origins_hold_their_text(config, path)


# ================================================================ YAML
class TestYamlConfigs:
    def test_llamafactory_recipe(self):
        path = SAMPLES / "llamafactory_sft.yaml"
        config = read_yaml_config(path)

        assert config.format == "yaml" and config.diagnostics == ()
        values = {key: setting.value for key, setting in config.values.items()}
        assert values["stage"] == "sft" and values["finetuning_type"] == "lora"
        assert values["do_train"] is True and values["bf16"] is True
        assert values["per_device_train_batch_size"] == 1 and values["per_device_eval_batch_size"] == 1
        assert values["gradient_accumulation_steps"] == 8
        assert values["cutoff_len"] == 2048
        assert values["deepspeed"] == "examples/deepspeed/ds_z3_config.json"
        assert values["eval_strategy"] == "steps" and values["eval_steps"] == 500
        assert values["val_size"] == 0.1 and isinstance(values["val_size"], float)
        assert values["learning_rate"] == 1e-4 and type(values["learning_rate"]) is float
        assert type(values["do_train"]) is bool and type(values["cutoff_len"]) is int

        # Line 4 is a comment with "—" and "é": bytes run ahead of characters from line 5 on.
        assert span(config, "per_device_train_batch_size") == (22, 30, 22, 31, 434, 435)
        assert span(config, "eval_steps") == (34, 13, 34, 16, 653, 656)
        # A plain scalar ends before its trailing comment.
        assert config.values["model_name_or_path"].text == "Qwen/Qwen2-VL-7B-Instruct"
        assert span(config, "model_name_or_path") == (2, 21, 2, 46, 30, 55)
        # A quoted scalar's origin covers its quotes.
        assert config.values["output_dir"].text == '"saves/qwen2_vl-7b/lora/sft"'
        assert span(config, "output_dir") == (18, 13, 18, 41, 347, 375)
        key = config.key_origins["per_device_train_batch_size"]
        assert (key.line, key.column, key.end_column) == (22, 1, 28)
        assert_origins_hold_their_text(config, path)

    def test_axolotl_config(self):
        path = SAMPLES / "axolotl_lora.yml"
        config = read_yaml_config(path)
        assert config.diagnostics == ()
        values = {key: setting.value for key, setting in config.values.items()}
        assert values["micro_batch_size"] == 2 and values["sequence_len"] == 4096
        assert values["gradient_checkpointing"] is True and values["flash_attention"] is True
        assert values["bf16"] == "auto"
        assert values["lora_target_modules.1"] == "v_proj"
        assert values["datasets.0.path"] == "mhenrichsen/alpaca_2k_test"
        assert values["special_tokens.pad_token"] == "</s>"
        assert config.values["special_tokens.pad_token"].text == "'</s>'"
        assert span(config, "micro_batch_size") == (17, 19, 17, 20, 296, 297)
        assert_origins_hold_their_text(config, path)

    def test_accelerate_config(self):
        path = SAMPLES / "accelerate_deepspeed.yaml"
        config = read_yaml_config(path)
        assert config.diagnostics == ()
        values = {key: setting.value for key, setting in config.values.items()}
        assert values["distributed_type"] == "DEEPSPEED" and values["num_processes"] == 8
        assert values["deepspeed_config.zero_stage"] == 2
        assert values["deepspeed_config.offload_optimizer_device"] == "none"
        assert values["mixed_precision"] == "bf16"
        assert values["downcast_bf16"] == "no"
        assert span(config, "deepspeed_config.zero_stage") == (8, 15, 8, 16, 200, 201)
        assert config.key_origins["deepspeed_config"].line == 3
        assert_origins_hold_their_text(config, path)

    def test_crlf_file(self, tmp_path):
        lf = read_yaml_config(SAMPLES / "llamafactory_sft.yaml")
        path = crlf_copy("llamafactory_sft.yaml", tmp_path)
        crlf = read_yaml_config(path)
        assert crlf.diagnostics == ()
        assert {k: s.value for k, s in crlf.values.items()} == {k: s.value for k, s in lf.values.items()}
        assert span(crlf, "per_device_train_batch_size") == (22, 30, 22, 31, 434 + 21, 435 + 21)
        assert_origins_hold_their_text(crlf, path)

    def test_syntax_error_keeps_the_lines_above_it(self):
        config = read_yaml_config(SAMPLES / "broken.yaml")
        assert kinds(config) == ["syntax-error"]
        origin = config.diagnostics[0].origin
        assert (origin.line, origin.column) == (5, 11)
        assert {k: s.value for k, s in config.values.items()} == {
            "stage": "sft",
            "per_device_train_batch_size": 4,
            "gradient_accumulation_steps": 2,
        }

    def test_error_on_the_first_line_gives_no_values(self, tmp_path):
        config = read_yaml_config(write(tmp_path, "c.yaml", b"a: b: c\nd: 1\n"))
        assert kinds(config) == ["syntax-error"] and config.values == {}
        assert (config.diagnostics[0].origin.line, config.diagnostics[0].origin.column) == (1, 5)

    def test_recovery_drops_a_key_whose_value_was_cut_off(self, tmp_path):
        config = read_yaml_config(write(tmp_path, "c.yaml", b"x:\n  y: 1\n  z:\n    - [1,\n"))
        assert kinds(config) == ["syntax-error"]
        assert {k: s.value for k, s in config.values.items()} == {"x.y": 1}

    def test_multiple_documents_read_the_first(self):
        config = read_yaml_config(SAMPLES / "two_documents.yaml")
        assert {k: s.value for k, s in config.values.items()} == {"num_processes": 4, "mixed_precision": "fp16"}
        assert kinds(config) == ["unmodelled-construct"]
        assert config.diagnostics[0].origin.line == 4

    def test_duplicate_keys_last_wins(self, tmp_path):
        config = read_yaml_config(write(tmp_path, "c.yaml", b"micro_batch_size: 8\nlr: 1\nmicro_batch_size: 2\n"))
        assert config.values["micro_batch_size"].value == 2
        assert config.values["micro_batch_size"].origin.line == 3
        assert kinds(config) == ["duplicate-key"] and config.diagnostics[0].origin.line == 3

    def test_flow_collections_block_scalars_and_no_trailing_newline(self, tmp_path):
        path = write(
            tmp_path,
            "c.yaml",
            b"proc: {sft: {type: 'X', size: 224}}\nnote: |\n  two\n  lines\nfiles: [a.jsonl, b.jsonl]",
        )
        config = read_yaml_config(path)
        assert config.diagnostics == ()
        assert config.values["proc.sft.type"].value == "X"
        assert span(config, "proc.sft.size") == (1, 31, 1, 34, 30, 33)
        assert config.values["note"].value == "two\nlines\n"
        assert config.values["note"].text == "|\n  two\n  lines"
        assert config.values["files.1"].value == "b.jsonl"
        assert span(config, "files.1") == (5, 18, 5, 25, 75, 82)
        assert_origins_hold_their_text(config, path)

    def test_yaml_types_follow_pyyaml_as_the_frameworks_load_them(self, tmp_path):
        """axolotl and accelerate load recipes with `yaml.safe_load`, LLaMA-Factory through OmegaConf's
        SafeLoader: YAML 1.1 booleans (`yes`, `on`), and `1e-5` without a dot is text to PyYAML."""
        path = write(tmp_path, "c.yaml", b"a: 1e-5\nb: yes\nc: ~\nd: 0x10\ne: 2024-01-01\nf: !!str 5\ng:\n"
                                         b"h: 1.0e-5\ni: off\n")
        values = {k: s.value for k, s in read_yaml_config(path).values.items()}
        assert values == {"a": "1e-5", "b": True, "c": None, "d": 16, "e": "2024-01-01", "f": "5", "g": None,
                          "h": 1e-5, "i": False}
        assert [type(values[k]) for k in "abdh"] == [str, bool, int, float]

    def test_anchors_and_merge_keys(self, tmp_path):
        path = write(tmp_path, "c.yaml", b"base: &base {lr: 1, bs: 2}\nrun:\n  <<: *base\n  bs: 8\n")
        config = read_yaml_config(path)
        assert config.values["run.bs"].value == 8 and config.values["run.bs"].origin.line == 4
        assert config.values["run.lr"].value == 1 and config.values["run.lr"].origin.line == 1

    def test_recursive_alias_does_not_loop(self, tmp_path):
        config = read_yaml_config(write(tmp_path, "c.yaml", b"a: &x [1, *x]\nb: 2\n"))
        assert config.values["b"].value == 2 and "unmodelled-construct" in kinds(config)

    def test_invalid_utf8_and_bom_keep_byte_offsets(self, tmp_path):
        path = write(tmp_path, "c.yaml", b"\xef\xbb\xbf# \xff bad byte\nname: caf\xc3\xa9\nsteps: 500\n")
        config = read_yaml_config(path)
        assert config.diagnostics == ()
        assert config.values["name"].value == "café"
        assert span(config, "steps") == (3, 8, 3, 11, 35, 38)
        assert_origins_hold_their_text(config, path)

    @pytest.mark.parametrize("data", [b"", b"# only a comment\n"])
    def test_empty_documents(self, tmp_path, data):
        config = read_yaml_config(write(tmp_path, "c.yaml", data))
        assert config.values == {} and config.diagnostics == ()

    def test_control_character_is_a_syntax_error(self, tmp_path):
        config = read_yaml_config(write(tmp_path, "c.yaml", b"a: 1\nb: \x07\n"))
        assert kinds(config) == ["syntax-error"] and config.diagnostics[0].origin.line == 2
        assert config.values["a"].value == 1

    def test_binary_and_missing(self, tmp_path):
        binary = read_yaml_config(write(tmp_path, "c.yaml", b"a: 1\n\x00\x00"))
        assert kinds(binary) == ["unreadable-file"] and binary.values == {}
        missing = read_yaml_config(tmp_path / "absent.yaml")
        assert kinds(missing) == ["missing-file"] and missing.format == "yaml"


yaml_keys = st.from_regex(r"[a-z_][a-z0-9_]{0,7}", fullmatch=True)
yaml_documents = st.dictionaries(
    yaml_keys,
    st.recursive(
        json_scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(yaml_keys, inner, max_size=3),
        max_leaves=8,
    ),
    max_size=5,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(document=yaml_documents, flow=st.booleans())
def test_yaml_reader_agrees_with_pyyaml_safe_load(tmp_path, document, flow):
    """The frameworks load recipes with PyYAML's safe loader (axolotl, accelerate) or a subclass of it
    (LLaMA-Factory through OmegaConf): the reader sees the values they see."""
    import yaml

    text = yaml.safe_dump(document, default_flow_style=flow, allow_unicode=True)
    path = tmp_path / "generated.yaml"
    path.write_text(text, encoding="utf-8")
    config = read_yaml_config(path)
    assert config.diagnostics == ()
    reference = yaml.safe_load(path.read_text(encoding="utf-8"))
    expected = flatten_reference(reference) if isinstance(reference, dict) else {}
    got = {key: setting.value for key, setting in config.values.items()}
    assert got == expected
    assert {key: type(value) for key, value in got.items()} == {key: type(value) for key, value in expected.items()}
    assert_origins_hold_their_text(config, path)


@pytest.mark.parametrize("levels", [150, 600])
def test_yaml_deep_nesting_is_bounded(tmp_path, levels):
    config = read_yaml_config(write(tmp_path, "c.yaml", b"a: " + b"[" * levels + b"]" * levels + b"\nb: 2\n"))
    assert kinds(config) == ["unreadable-file"]


@pytest.mark.parametrize("loader", ["libyaml", "python"])
def test_both_pyyaml_loaders_give_the_same_values_and_byte_spans(tmp_path, monkeypatch, loader):
    """libyaml reads when PyYAML has it; PyYAML's Python loader otherwise. A byte order mark, multi-byte
    text, a block scalar and a nesting past the bound read the same through both."""
    import yaml

    from trainlint.formats import yaml as yaml_format

    if loader == "python":
        monkeypatch.setattr(yaml_format, "loader", lambda: yaml.SafeLoader)
    data = ("\ufeffname: café\nnotes: |\n  two\n  lines\n\nsteps: 500\ndeep: " + "[" * 120 + "]" * 120 + "\n")
    config = read_yaml_config(write(tmp_path, "c.yaml", data.encode()))
    assert config.values["name"].value == "café" and config.values["steps"].value == 500
    assert span(config, "steps") == (6, 8, 6, 11, 46, 49)  # after a 3-byte mark and a 2-byte é
    assert config.values["notes"].text == "|\n  two\n  lines"
    assert kinds(config) == ["unreadable-file"]  # the part past the nesting bound is not read, and said so
    assert_origins_hold_their_text(config, path=tmp_path / "c.yaml")
