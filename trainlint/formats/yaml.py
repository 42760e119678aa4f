"""YAML recipes: the ruamel.yaml round-trip parser, `#` comments and syntax errors. There are no
logical lines beyond the physical ones."""
from __future__ import annotations

import io
from typing import TYPE_CHECKING, Iterator, List

from trainlint.formats.lines import Comment, LogicalLines, hash_comments

if TYPE_CHECKING:
    from ruamel.yaml import YAML
    from ruamel.yaml.nodes import Node

KIND = "yaml"
NAME = "YAML"


def round_trip() -> YAML:
    """A parser that keeps every token's position and types scalars as YAML 1.2 does (unless the file
    says otherwise). One per read: ruamel's parser holds the state of the document it reads."""
    from ruamel.yaml import YAML  # lazy: ruamel costs ~75 ms to import and most scans read no YAML

    return YAML(typ="rt")


def compose(parser: YAML, text: str) -> Iterator[Node]:
    """The documents of `text` composed into position-carrying nodes, one at a time (so a broken
    second document does not hide the first)."""
    return parser.compose_all(text)


def comments(data: bytes) -> List[Comment]:
    """`#` comments addressed to trainlint, read line by line (YAML's rule: at the start of a line or after
    whitespace)."""
    return hash_comments(data)


def logical_lines(data: bytes) -> LogicalLines:
    return {}


def syntax_errors(data: bytes) -> int:
    """1 when ruamel rejects the text (any document of it), else 0."""
    from ruamel.yaml.error import YAMLError  # lazy, as in round_trip

    try:
        list(round_trip().load_all(io.StringIO(data.decode("utf-8"))))
    except (YAMLError, UnicodeDecodeError, ValueError):
        return 1
    return 0
