"""Editing a DeepSpeed JSON config: a value rewritten as a JSON literal, and a new offload entry added to
the `zero_optimization` section in the section's indentation and line ending."""
from __future__ import annotations

import json
import re

from trainlint.core import Edit, Setting, Value
from trainlint.fixers.editors.common import CannotRender, ReadBytes, Refused, check_scalar, read_or_refuse
from trainlint.fixers.edits import line_ending, origin_of

_ZERO_SECTION = re.compile(rb'"zero_optimization"\s*:\s*\{')


def json_value(raw: str, new: Value) -> str:
    check_scalar(new)
    if isinstance(new, float) and not new == new:  # NaN has no JSON spelling
        raise CannotRender("NaN")
    return json.dumps(new, ensure_ascii=False)


def replace_value(data: bytes, target: Setting, raw: str, new: Value) -> Edit:
    return Edit(target.origin, json_value(raw, new))


def insert_offload(path: str, key: str, device: Value, read: ReadBytes) -> Edit:
    """A new `"<key>": {"device": ..., "pin_memory": true}` entry at the top of the config's
    `zero_optimization` section (offload of the optimizer states or of the parameters)."""
    data = read_or_refuse(read, path)
    sections = list(_ZERO_SECTION.finditer(data))
    if len(sections) != 1:
        raise Refused(f"{path} has no single `zero_optimization` section to add {key} to")
    if not isinstance(device, str) or not device:
        raise Refused(f"no offload device to write for {key}")
    opening = sections[0].end()
    following = data[opening:]
    empty = following.lstrip().startswith(b"}")
    newline = line_ending(data)
    next_line = re.match(rb"[ \t]*\r?\n([ \t]*)\S", following)
    if next_line is not None and not empty:
        indentation = next_line.group(1).decode("utf-8")
        entry = f'{newline}{indentation}"{key}": {{"device": "{device}", "pin_memory": true}},'
    else:
        entry = f' "{key}": {{"device": "{device}", "pin_memory": true}}' + ("" if empty else ",")
    return Edit(origin_of(path, data, opening, opening), entry)
