"""JSON configs: the tree-sitter-json parse, `//` comments (which strict loaders reject but some accept)
and syntax errors. There are no logical lines beyond the physical ones."""
from __future__ import annotations

import functools
from typing import List

import tree_sitter
import tree_sitter_json

from trainlint.formats.lines import Comment, LogicalLines, comment
from trainlint.formats.trees import error_count

KIND = "json"
NAME = "JSON"


@functools.lru_cache(maxsize=1)
def language() -> tree_sitter.Language:
    return tree_sitter.Language(tree_sitter_json.language())


def parse(data: bytes) -> tree_sitter.Tree:
    return tree_sitter.Parser(language()).parse(data)


def comments(data: bytes) -> List[Comment]:
    """`//` comments, to the end of the line; a `//` inside a string is text."""
    found = []
    index, in_string = 0, False
    while index < len(data):
        byte = data[index:index + 1]
        if in_string:
            if byte == b"\\":
                index += 1
            elif byte == b'"':
                in_string = False
        elif byte == b'"':
            in_string = True
        elif data[index:index + 2] == b"//":
            end = data.find(b"\n", index)
            end = len(data) if end < 0 else end
            if data[end - 1:end] == b"\r":
                end -= 1
            found.append(comment(data, index, end))
            index = end
            continue
        index += 1
    return found


def logical_lines(data: bytes) -> LogicalLines:
    return {}


def syntax_errors(data: bytes) -> int:
    """How many ERROR and MISSING nodes tree-sitter-json reports (0 for a clean file)."""
    return error_count(parse(data).root_node)
