"""Each format's editor writes a value in the style of the token it replaces."""
from __future__ import annotations

import pytest

from trainlint.core import Origin, Setting, SourceKind
from trainlint.fixers import editors
from trainlint.fixers.editors import CannotRender, Refused
from trainlint.fixers.editors.json import json_value
from trainlint.fixers.editors.python import python_value
from trainlint.fixers.editors.shell import shell_value
from trainlint.fixers.editors.yaml import yaml_value


@pytest.mark.parametrize("raw, new, current, written", [
    ("16", 4, 16, "4"),
    ('"16"', 4, 16, '"4"'),
    ("--per_device_train_batch_size=16", 4, 16, "--per_device_train_batch_size=4"),
    ('BATCH="16"', 4, 16, 'BATCH="4"'),
    ("true", False, True, "false"),
    ("", "a b", None, "'a b'"),
])
def test_shell_words_keep_their_quotes_prefix_and_case(raw, new, current, written):
    assert shell_value(raw, new, current) == written


def test_a_shell_value_that_cannot_be_quoted_is_refused():
    with pytest.raises(CannotRender):
        shell_value('"x"', "$HOME")


@pytest.mark.parametrize("write, raw, new, written", [
    (python_value, "'fp16'", "bf16", "'bf16'"),
    (python_value, "8", True, "True"),
    (json_value, '"auto"', 4, "4"),
    (yaml_value, "'cosine'", "linear", "'linear'"),
    (yaml_value, "True", False, "False"),
    (yaml_value, "x", "yes", '"yes"'),
])
def test_each_format_spells_a_value_as_it_reads_back(write, raw, new, written):
    assert write(raw, new) == written


def _setting(path: str, text: str, kind: SourceKind = SourceKind.SHELL_VARIABLE) -> Setting:
    return Setting(text, kind, Origin(path, 1, 1, 1, 1 + len(text), 0, len(text)), text)


def test_the_editor_is_chosen_by_the_file_format():
    assert editors.replace_value(b"8", _setting("c.yaml", "8"), "8", "auto").content == "auto"
    assert editors.replace_value(b"8", _setting("ds.json", "8"), "8", "auto").content == '"auto"'
    assert editors.replace_value(b"8", _setting("launch", "8"), "8", 4).content == "4"


def test_an_empty_yaml_value_is_written_after_its_colon_with_a_space():
    data = b"micro_batch_size:\nnum_epochs: 1\n"
    empty = Setting(None, SourceKind.CONFIG_FILE, Origin("c.yaml", 1, 18, 1, 18, 17, 17), "")
    edit = editors.replace_value(data, empty, "", 4)
    assert data[:edit.origin.start_byte] + edit.content.encode() + data[edit.origin.end_byte:] == \
        b"micro_batch_size: 4\nnum_epochs: 1\n"


def test_computed_shell_text_and_python_code_are_not_overwritten():
    with pytest.raises(Refused, match="computed"):
        editors.replace_value(b"$((A*2))", _setting("run.sh", "$((A*2))"), "$((A*2))", 4)
    with pytest.raises(Refused, match="not a literal"):
        editors.replace_value(b"args.bs", _setting("train.py", "args.bs"), "args.bs", 4)
