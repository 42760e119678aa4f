"""Bash launchers: the tree-sitter-bash parse, comments, `\\`-continued logical lines and syntax errors."""
from __future__ import annotations

import functools
from typing import List

import tree_sitter
import tree_sitter_bash

from trainlint.formats.lines import Comment, Lines, LogicalLines, comment, hash_comments
from trainlint.formats.trees import error_count

KIND = "shell"
NAME = "shell"


@functools.lru_cache(maxsize=1)
def language() -> tree_sitter.Language:
    return tree_sitter.Language(tree_sitter_bash.language())


def parse(data: bytes) -> tree_sitter.Tree:
    return tree_sitter.Parser(language()).parse(data)


def comments(data: bytes) -> List[Comment]:
    """Comment nodes of the bash tree (so a `#` inside quotes or a heredoc is not a comment)."""
    try:
        tree = parse(data)
    except Exception:  # a parser failure must not stop the lint; fall back to the plain rule
        return hash_comments(data)
    found = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "comment":
            found.append((node.start_byte, node.end_byte))
        else:
            stack.extend(node.children)
    return [comment(data, start, end) for start, end in sorted(found)]


def logical_lines(data: bytes) -> LogicalLines:
    """Line -> (first, last) line of the command a trailing `\\` continues over."""
    lines = Lines(data)
    spans: LogicalLines = {}
    number = 1
    while number <= lines.count():
        first = number
        while number < lines.count() and continues(lines.text(number)):
            number += 1
        for line in range(first, number + 1):
            spans[line] = (first, number)
        number += 1
    return spans


def continues(line: bytes) -> bool:
    """The line ends in an unescaped `\\`: the command goes on on the next line."""
    trailing = len(line) - len(line.rstrip(b"\\"))
    return trailing % 2 == 1


def syntax_errors(data: bytes) -> int:
    """How many ERROR and MISSING nodes tree-sitter-bash reports (0 for a clean file)."""
    return error_count(parse(data).root_node)
