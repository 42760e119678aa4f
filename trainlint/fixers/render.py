"""Writing a new value in the syntax of the file it goes into, in the style of the token it replaces."""
from __future__ import annotations

import json
import re
from typing import Optional

import libcst as cst

from trainlint.core import Unknown, Value
from trainlint.formats import FileKind, kind_of

SHELL, PYTHON, JSON, YAML = FileKind.SHELL, FileKind.PYTHON, FileKind.JSON, FileKind.YAML

_QUOTES = ("\"", "'")
# What may precede the value inside one shell word: `--name=` or an assignment's `NAME=`.
_WORD_PREFIX = re.compile(r"^(--?[A-Za-z0-9_.\-]+=|[A-Za-z_][A-Za-z0-9_]*=)")
_SHELL_SAFE = re.compile(r"^[A-Za-z0-9_@%+=:,./\-]+$")
_YAML_PLAIN = re.compile(r"^[A-Za-z0-9_./\-][A-Za-z0-9_./\- ]*$")
_YAML_SPECIAL = {"", "~", "null", "Null", "NULL", "yes", "no", "Yes", "No", "on", "off", "On", "Off", "y", "n",
                 "true", "false", "True", "False", "TRUE", "FALSE"}


class CannotRender(ValueError):
    """The value has no faithful spelling in this file (an Unknown, a structure)."""


def file_kind(path: str) -> FileKind:
    """The format of a file to edit: a launcher may be named anything, so a name no format claims is shell."""
    return kind_of(path) or FileKind.SHELL


def _split_quotes(raw: str):
    """`"8"` -> ('"', '8'); `8` -> ('', '8')."""
    if len(raw) >= 2 and raw[0] in _QUOTES and raw[-1] == raw[0]:
        return raw[0], raw[1:-1]
    return "", raw


def _bool_word(value: bool, old_word: str) -> str:
    """`True`/`False` unless the old word was written lower-case (`true`), as HfArgumentParser takes both."""
    word = "True" if value else "False"
    return word.lower() if old_word[:1].islower() and old_word.lower() in ("true", "false") else word


def _check_scalar(new: Value) -> None:
    if isinstance(new, Unknown) or isinstance(new, (list, dict, tuple)):
        raise CannotRender(f"cannot write {new!r}")


def shell_value(raw: str, new: Value, current: Value = None) -> str:
    """A shell word carrying `new`, keeping the old word's quotes, and its `--name=` (or `NAME=`)
    prefix when the word holds more than the value `current` it was read as."""
    _check_scalar(new)
    quote, inner = _split_quotes(raw)
    prefix = ""
    found = _WORD_PREFIX.match(inner)
    if found is not None and str(current) != inner:
        prefix, inner = found.group(0), inner[found.end():]
        if not quote:
            quote, inner = _split_quotes(inner)  # `--name="8"`
    if isinstance(new, bool):
        text = _bool_word(new, inner)
    elif new is None:
        text = "None"
    elif isinstance(new, float):
        text = repr(new)
    else:
        text = str(new)
    if quote:
        if quote in text or (quote == "\"" and re.search(r"[$`\\!]", text)):
            raise CannotRender(f"cannot place {text!r} inside {quote}{quote}")
        return f"{prefix}{quote}{text}{quote}" if raw.startswith(prefix + quote) and prefix else \
            f"{quote}{prefix}{text}{quote}"
    if not _SHELL_SAFE.match(text):
        if "'" in text:
            raise CannotRender(f"cannot quote {text!r} for the shell")
        return f"{prefix}'{text}'"
    return prefix + text


def python_value(raw: str, new: Value) -> str:
    """A Python literal; a string keeps the old literal's quote character."""
    _check_scalar(new)
    if isinstance(new, (bool, int)) or new is None:
        text = repr(new)
    elif isinstance(new, float):
        text = repr(new)
    else:
        quote = "'" if raw.lstrip("rRbBuUfF")[:1] == "'" else "\""
        body = new.replace("\\", "\\\\").replace(quote, "\\" + quote).replace("\n", "\\n")
        text = f"{quote}{body}{quote}"
    try:
        cst.parse_expression(text)
    except cst.ParserSyntaxError as error:
        raise CannotRender(f"{text!r} is not a Python literal") from error
    return text


def json_value(raw: str, new: Value) -> str:
    _check_scalar(new)
    if isinstance(new, float) and not new == new:  # NaN has no JSON spelling
        raise CannotRender("NaN")
    return json.dumps(new, ensure_ascii=False)


def yaml_value(raw: str, new: Value) -> str:
    """A plain YAML scalar when one reads back as the same value, else a quoted one."""
    _check_scalar(new)
    quote, inner = _split_quotes(raw)
    if isinstance(new, bool):
        word = "true" if new else "false"
        return word.capitalize() if inner[:1].isupper() and inner.lower() in ("true", "false") else word
    if new is None:
        return "null"
    if isinstance(new, (int, float)):
        return repr(new)
    if quote == "'":
        return "'" + new.replace("'", "''") + "'"
    if quote == "\"" or not _YAML_PLAIN.match(new) or new in _YAML_SPECIAL or _looks_numeric(new) \
            or new != new.strip():
        return json.dumps(new, ensure_ascii=False)
    return new


def _looks_numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def render(kind: str, raw: str, new: Value, current: Value = None) -> str:
    """`new` spelled for a file of `kind`, replacing the token `raw` (read as `current`)."""
    if kind == PYTHON:
        return python_value(raw, new)
    if kind == JSON:
        return json_value(raw, new)
    if kind == YAML:
        return yaml_value(raw, new)
    return shell_value(raw, new, current)


def is_bare_flag(raw: str) -> bool:
    """`--bf16` standing alone (a store-true style flag), not `--name=value` and not a value word."""
    quote, inner = _split_quotes(raw)
    return not quote and inner.startswith("--") and "=" not in inner and len(inner) > 2


def same_value(first: Value, second: Value) -> Optional[bool]:
    """Whether two values are equal as the trainer would read them (`"4"` and 4 are)."""
    if isinstance(first, Unknown) or isinstance(second, Unknown):
        return None
    if isinstance(first, bool) or isinstance(second, bool):
        return _truth(first) == _truth(second) if _truth(first) is not None else False
    if isinstance(first, str) and isinstance(second, str):
        return first == second
    try:
        return float(first) == float(second)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return str(first) == str(second)


def _truth(value: Value) -> Optional[bool]:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    if isinstance(value, int):
        return bool(value)
    return None
