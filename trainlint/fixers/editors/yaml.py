"""Editing a YAML recipe: a scalar rewritten plain when it reads back as the same value (quoted otherwise,
in the old quote style), and a new top-level `key: value` line in the file's line ending."""
from __future__ import annotations

import json
import re
from typing import Optional

from trainlint.core import Edit, Launcher, Setting, TrainingRun, Value
from trainlint.fixers.editors.common import (
    CannotRender,
    ReadBytes,
    Refused,
    check_scalar,
    read_or_refuse,
    spelling,
    split_quotes,
)
from trainlint.fixers.edits import line_ending, origin_of
from trainlint.knobs import ARGS, AXOLOTL

_YAML_PLAIN = re.compile(r"^[A-Za-z0-9_./\-][A-Za-z0-9_./\- ]*$")
_YAML_SPECIAL = {"", "~", "null", "Null", "NULL", "yes", "no", "Yes", "No", "on", "off", "On", "Off", "y", "n",
                 "true", "false", "True", "False", "TRUE", "FALSE"}


def yaml_value(raw: str, new: Value) -> str:
    """A plain YAML scalar when one reads back as the same value, else a quoted one."""
    check_scalar(new)
    quote, inner = split_quotes(raw)
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


def replace_value(data: bytes, target: Setting, raw: str, new: Value) -> Edit:
    value = yaml_value(raw, new)
    start = target.origin.start_byte
    if start == target.origin.end_byte and data[start - 1:start] == b":":
        # An empty value (`key:`) sits right after its colon: the new one needs the space a value takes.
        value = " " + value
    return Edit(target.origin, value)


def insert_key(run: TrainingRun, knob_name: str, new: Value, read: ReadBytes, path: Optional[str] = None) -> Edit:
    """A new top-level `key: value` line at the end of a recipe (the run's own file unless `path`)."""
    path = path or run.origin.path
    data = read_or_refuse(read, path)
    namespace = AXOLOTL if run.launcher == Launcher.AXOLOTL else ARGS
    # A file of arguments checked by itself is read by a parser out of view: HfArgumentParser refuses a key no
    # field takes, so only a TrainingArguments field is written, never a guess (`lora_enable` is LLaVA's own).
    key = spelling(run, knob_name, namespace, guess=run.launcher != Launcher.ARGUMENTS_FILE, place="recipe key")
    newline = line_ending(data)
    try:
        value = yaml_value("", new)
    except CannotRender as error:
        raise Refused(str(error)) from error
    lead = "" if not data or data.endswith(b"\n") else newline
    return Edit(origin_of(path, data, len(data), len(data)), f"{lead}{key}: {value}{newline}")
