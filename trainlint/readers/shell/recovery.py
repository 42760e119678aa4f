"""Parsing a launcher so that what bash accepts is read even where tree-sitter-bash does not recover.

tree-sitter-bash gives up on a few constructs bash accepts, and its recovery can swallow the rest of the
file (a zsh-style `${(s:,:)x}` turns every later line into one broken expansion). When bash's own checks
(`certainty.judge`) find the file valid, each such construct is masked with bytes of the same length that
tree-sitter reads (so every offset still points into the original file) and the file is parsed again: a
`${...}` becomes a placeholder expansion whose value is unknown, a here-doc with no command becomes blank
lines, a `\\` on the last line becomes a space, an escaped `\\<` in a test becomes `==`, and a command substitution
of a comment alone (`` `# a note` ``), which bash expands to nothing, becomes blanks. What is still
unparsed afterwards is reported as a construct the reader does not model, never as a syntax error: only
`certainty` decides that bash rejects a file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List, Optional, Tuple

import tree_sitter

from trainlint.readers.shell.certainty import Verdict, judge
from trainlint.readers.shell.syntax import parse
from trainlint.readers.shell.values import Node, Span

MAX_ROUNDS = 6
# `[ "$A" \< "$B" ]`: tree-sitter-bash reads `\<` as the start of a redirection
_ESCAPED_OPERATOR = re.compile(rb"\\[<>]")
MAX_ERRORS_PER_ROUND = 50


@dataclass(frozen=True)
class Mask:
    """A construct tree-sitter cannot parse, replaced by same-length text it can."""

    span: Span
    what: str  # "expansion", "here-doc", "backslash", "escaped" or "blank"


@dataclass(frozen=True)
class ParsedScript:
    data: bytes  # the bytes tree-sitter parsed: the source with `masks` applied
    tree: tree_sitter.Tree
    verdict: Verdict
    masks: Tuple[Mask, ...]


def parse_script(data: bytes) -> ParsedScript:
    verdict = judge(data)
    if verdict.rejected or not verdict.certain:
        return ParsedScript(data, parse(data), verdict, ())
    # A command substitution of a comment (`` `# a note` `` after a flag) expands to nothing; tree-sitter-bash reads
    # its `#` as a comment that swallows the closing backquote and the lines after it.
    masks: List[Mask] = [Mask(span, "blank") for span in verdict.empty_substitutions]
    masked = data
    for mask in masks:
        masked = apply(masked, mask)
    tree = parse(masked)
    for _ in range(MAX_ROUNDS):
        if not tree.root_node.has_error:
            break
        nodes = error_nodes(tree.root_node)[:MAX_ERRORS_PER_ROUND]
        found = [mask for node in nodes for mask in [mask_for(masked, node, verdict)]
                 if mask is not None and mask not in masks]
        if not found:
            break
        for mask in dict.fromkeys(found):
            masks.append(mask)
            masked = apply(masked, mask)
        tree = parse(masked)
    return ParsedScript(masked, tree, verdict, tuple(masks))


def error_nodes(root: Node) -> List[Node]:
    """ERROR and MISSING nodes, in the order they appear in the file."""
    found: List[Node] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_missing or node.type == "ERROR":
            found.append(node)
        elif node.has_error:
            stack.extend(node.children)
    return sorted(found, key=lambda node: (node.start_byte, node.end_byte))


def mask_for(data: bytes, node: Node, verdict: Verdict) -> Optional[Mask]:
    position = node.start_byte
    if len(data) - position < 64 and not data[position:].strip(b" \t\r\n\\"):
        tail = data.rstrip(b" \t\r\n")
        if tail.endswith(b"\\"):
            return Mask((len(tail) - 1, len(tail)), "backslash")
    for start, end in verdict.heredocs:
        if start <= position < end:
            return Mask((start, end), "here-doc")
    enclosing = [span for span in verdict.expansions if span[0] <= position < span[1]]
    if enclosing:
        return Mask(min(enclosing, key=lambda span: span[1] - span[0]), "expansion")
    escaped = _ESCAPED_OPERATOR.search(data, node.start_byte, max(node.end_byte, node.start_byte + 1))
    if escaped is not None:
        return Mask(escaped.span(), "escaped")
    return None


def apply(data: bytes, mask: Mask) -> bytes:
    start, end = mask.span
    if mask.what == "expansion":
        length = end - start
        placeholder = b"${" + b"_" * (length - 3) + b"}" if length >= 4 else b"$" + b"_" * (length - 1)
    elif mask.what == "escaped":
        placeholder = b"=="  # a comparison tree-sitter reads; the reader does not evaluate tests
    elif mask.what == "here-doc":
        placeholder = bytes(byte if byte == 0x0A else 0x20 for byte in data[start:end])
    else:
        placeholder = b" " * (end - start)
    return data[:start] + placeholder + data[end:]
