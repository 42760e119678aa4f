"""One module per file format trainlint reads and rewrites, each owning what only that format knows:
how the file is parsed (the parser and its options), where its comments are, which physical lines form
one logical line, and how many syntax errors a text has. Readers, suppressions and the fix verification
ask here instead of parsing for themselves, so a new format is one new module and one registry entry.

Python's reader keeps its own libcst call (`trainlint.readers.python.loading`, which screens the text first
and caches what it reads); `formats.python` answers the whole-file questions."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, List, Mapping, Optional

from trainlint.core import FileKind, file_kind, suffixes_of
from trainlint.formats import json, python, shell, yaml
from trainlint.formats.lines import Comment, Lines, LogicalLines


@dataclass(frozen=True)
class Format:
    kind: FileKind
    name: str  # as a message names it: "shell", "Python", "JSON", "YAML"
    suffixes: frozenset
    comments: Callable[[bytes], List[Comment]]
    logical_lines: Callable[[bytes], LogicalLines]
    syntax_errors: Callable[[bytes], int]


def _format(kind: FileKind, module, suffixes) -> Format:
    return Format(kind, module.NAME, frozenset(suffixes), module.comments, module.logical_lines,
                  module.syntax_errors)


# The suffixes come from the one table in trainlint.core; a file without a suffix is a shell script.
FORMATS: Mapping[FileKind, Format] = {
    FileKind.SHELL: _format(FileKind.SHELL, shell, suffixes_of(FileKind.SHELL) | {""}),
    FileKind.PYTHON: _format(FileKind.PYTHON, python, suffixes_of(FileKind.PYTHON)),
    FileKind.JSON: _format(FileKind.JSON, json, suffixes_of(FileKind.JSON)),
    FileKind.YAML: _format(FileKind.YAML, yaml, suffixes_of(FileKind.YAML)),
}


def kind_of(path: str) -> Optional[FileKind]:
    """The format a file's name says it is in, or None for a name no format claims."""
    kind = file_kind(path)
    return kind if kind in FORMATS else None


def format_of(path: str) -> Optional[Format]:
    kind = kind_of(path)
    return None if kind is None else FORMATS[kind]


__all__ = ["Comment", "FORMATS", "FileKind", "Format", "Lines", "LogicalLines", "format_of", "kind_of"]
