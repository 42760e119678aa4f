"""Editors, one per file format: how to write a new value at an origin, and how to add a setting nothing
pins yet, in the style of the file (its quoting, `\\` continuations, indentation, line endings).
`trainlint.fixers.planner` decides which setting to change and where; an editor only writes it."""
from __future__ import annotations

from typing import Callable, Mapping

from trainlint.core import Edit, Setting, Value
from trainlint.fixers.editors import json, python, shell, yaml
from trainlint.fixers.editors.common import CannotRender, ReadBytes, Refused, same_value, spelling
from trainlint.formats import FileKind, kind_of

# (file bytes, the setting to rewrite, the text at its origin, the new value) -> the edit.
ReplaceValue = Callable[[bytes, Setting, str, Value], Edit]

REPLACE_VALUE: Mapping[FileKind, ReplaceValue] = {
    FileKind.SHELL: shell.replace_value,
    FileKind.PYTHON: python.replace_value,
    FileKind.JSON: json.replace_value,
    FileKind.YAML: yaml.replace_value,
}


def file_kind(path: str) -> FileKind:
    """The format of a file to edit: a launcher may be named anything, so a name no format claims is shell."""
    return kind_of(path) or FileKind.SHELL


def replace_value(data: bytes, target: Setting, raw: str, new: Value) -> Edit:
    """The value at `target.origin` (which reads `raw`) rewritten as `new` in the file's own syntax."""
    return REPLACE_VALUE[file_kind(target.origin.path)](data, target, raw, new)


__all__ = ["CannotRender", "ReadBytes", "Refused", "file_kind", "replace_value", "same_value", "spelling"]
