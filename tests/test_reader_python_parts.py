"""The Python reader's parts on small snippets: enclosing branches, overrides gated on a parsed
argument, the depth screen that protects libcst, and byte offsets of odd lines."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path
from typing import Dict

import libcst as cst
import pytest

from trainlint.core import Unknown
from trainlint.readers.facts import Override
from trainlint.readers.python import read_python, screening
from trainlint.readers.python.context import Branch
from trainlint.readers.python.positions import ByteLocator
from trainlint.readers.python.screening import MAX_BRACKET_DEPTH, MAX_CHAIN_TOKENS, TooDeep, too_deep_to_parse
from trainlint.readers.source import read_source


def write(tmp_path: Path, text: str, name: str = "train.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "test, in_body, expected",
    [
        ("training_args.gradient_checkpointing", True, True),
        ("training_args.gradient_checkpointing", False, False),
        ("not training_args.gradient_checkpointing", False, True),
        ("not training_args.gradient_checkpointing", True, False),
        ("model_args.lora_enable and training_args.gradient_checkpointing", True, True),
        ("model_args.lora_enable or training_args.gradient_checkpointing", True, False),
        ("getattr(training_args, 'gradient_checkpointing', False)", True, True),
        ("training_args.bf16", True, False),
    ],
)
def test_branch_requires_flag(test, in_body, expected):
    branch = Branch(cst.parse_expression(test), in_body)
    assert branch.requires_flag("gradient_checkpointing") is expected


def test_except_handler_requires_no_flag():
    assert Branch(None, True).requires_flag("gradient_checkpointing") is False


def overrides_by_line(path: Path) -> Dict[int, Override]:
    module = read_python(path)
    assert not module.diagnostics
    return {override.setting.origin.line: override for override in module.overrides}


def test_overrides_are_gated_on_the_argument_their_branch_tests(tmp_path):
    path = write(
        tmp_path,
        """\
        def train(model, model_args, training_args):
            if model_args.grad_checkpoint:
                model.gradient_checkpointing_enable()
            else:
                training_args.per_device_train_batch_size = 4
            if not getattr(model_args, "freeze_vision", False):
                training_args.bf16 = True
            if model_args.lora_enable:
                if model_args.use_fast:
                    training_args.tf32 = True
            training_args.fp16 = False
        """,
    )
    found = overrides_by_line(path)

    enable = found[3]
    assert (enable.name, enable.when, enable.when_negated, enable.when_value) == (
        "gradient_checkpointing",
        "grad_checkpoint",
        False,
        True,
    )
    assert isinstance(enable.setting.value, Unknown)
    assert "conditional on `model_args.grad_checkpoint`" in enable.setting.value.reason

    batch = found[5]
    assert (batch.name, batch.when, batch.when_negated, batch.when_value) == (
        "per_device_train_batch_size",
        "grad_checkpoint",
        True,
        4,
    )
    assert "conditional on `not (model_args.grad_checkpoint)`" in batch.setting.value.reason

    bf16 = found[7]
    assert (bf16.when, bf16.when_negated, bf16.when_value) == ("freeze_vision", True, True)

    nested = found[10]  # two enclosing branches: not gated on either
    assert (nested.name, nested.when) == ("tf32", None)
    assert isinstance(nested.setting.value, Unknown)

    plain = found[11]
    assert (plain.name, plain.setting.value, plain.when) == ("fp16", False, None)


def test_override_under_its_own_flag_follows_it_and_is_dropped(tmp_path):
    path = write(
        tmp_path,
        """\
        def train(model, training_args):
            if training_args.gradient_checkpointing:
                model.gradient_checkpointing_enable()
            if not training_args.gradient_checkpointing:
                pass
            else:
                training_args.gradient_checkpointing = True
        """,
    )
    assert read_python(path).overrides == ()


def test_override_following_another_argument_is_not_gated(tmp_path):
    path = write(
        tmp_path,
        """\
        def train(model_args, training_args):
            if model_args.lora_enable:
                training_args.gradient_checkpointing = model_args.grad_checkpoint
        """,
    )
    (override,) = read_python(path).overrides
    assert (override.name, override.when) == ("gradient_checkpointing", None)


def test_screen_reports_the_line_where_brackets_get_too_deep():
    text = "x = 1\n\ny = " + "(" * (MAX_BRACKET_DEPTH + 1) + "1" + ")" * (MAX_BRACKET_DEPTH + 1) + "\n"
    assert too_deep_to_parse(text) == TooDeep(3, f"brackets nested more than {MAX_BRACKET_DEPTH} deep")


def test_screen_passes_ordinary_and_broken_text():
    assert too_deep_to_parse("def f(a, b):\n    return g(h(a))[b] + 1\n") is None
    assert too_deep_to_parse("def f(:\n  '''unterminated\n") is None  # the parser reports it


DEEP = "(" * (MAX_BRACKET_DEPTH + 1) + "1" + ")" * (MAX_BRACKET_DEPTH + 1)
CHAINED = " + ".join(["x"] * (MAX_CHAIN_TOKENS + 2))


@pytest.mark.parametrize(
    "text",
    [
        f"class A:\n    def f(self):\n        if self.x:\n            y = {DEEP}\n        return 1\n",
        f"try:\n    pass\nexcept ({DEEP}):\n    pass\nfinally:\n    z = 2\n",
        f"if a:\n    pass\nelif {CHAINED}:\n    pass\nelse:\n    pass\n",
        f"@decorate({DEEP})\ndef f():\n    pass\n",
        "def f():\n    '''(((('''\n    return (\n" + "        'a'\n" * (MAX_CHAIN_TOKENS + 2) + "    )\n",
        "x = 1; y = " + " and ".join(["b"] * (MAX_CHAIN_TOKENS + 2)) + "\n",
        "match x:\n    case 1:\n        y = f" + "()" * (MAX_CHAIN_TOKENS + 1) + "\n",
    ],
)
def test_screen_with_the_stdlib_tree_finds_what_the_token_scan_finds(text):
    found = too_deep_to_parse(text)
    assert found is not None
    assert too_deep_to_parse(text, ast.parse(text)) == found


def test_screen_with_the_stdlib_tree_skips_the_token_scan_on_ordinary_code(monkeypatch):
    docstring = '"""Settings (see the table):\n' + "    (a) ((b)) [c] {d} x.y + z - w\n" * 400 + '"""\n'
    text = docstring + "class Config:\n    " + docstring.replace("\n", "\n    ") + "x: int = 1\n"
    text += "def f(a, b):\n    return g(h(a))[b] + 1\n" * 500
    monkeypatch.setattr(screening, "_scanned", lambda text: pytest.fail("the token scan ran"))
    assert too_deep_to_parse(text, ast.parse(text)) is None


def test_screen_with_the_stdlib_tree_scans_tokens_when_a_line_may_be_too_deep(monkeypatch):
    text = "x = [\n" + "    (1, 2),\n" * (MAX_BRACKET_DEPTH + 1) + "]\n"  # wide, not deep: only the scan can tell
    scanned = []
    monkeypatch.setattr(screening, "_scanned", lambda text: scanned.append(text))
    assert too_deep_to_parse(text, ast.parse(text)) is None
    assert scanned == [text]


def test_byte_locator_counts_characters_as_bytes_on_crlf_and_invalid_utf8_lines(tmp_path):
    path = tmp_path / "odd.py"
    path.write_bytes(b"a = 1\r\n# \xe9t\xc3\xa9\r\nb = 'x'\n")
    source = read_source(path)
    locator = ByteLocator(source, has_bom=False)
    assert locator.offset(1, 4) == 4  # `1` on an ASCII line
    # line 2 decodes to "# \ufffdt\xe9": the invalid byte is one character, the valid é is two bytes
    assert locator.offset(2, 2) == 9
    assert locator.offset(2, 3) == 10
    assert locator.offset(2, 4) == 11
    assert locator.offset(2, 5) == 13  # past the text: the newline
    assert locator.offset(3, 4) == 19
    assert locator.offset(9, 0) == len(source.data)
