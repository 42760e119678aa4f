"""The byte-level reading of tree-sitter-bash nodes: characters, literal text, words."""

from __future__ import annotations

from typing import Iterator, List, Sequence, Tuple

# Parsing belongs to the shell format; the reader's modules import it from here.
from trainlint.formats.shell import parse  # noqa: F401
from trainlint.readers.shell.values import Doc, Node, Piece, Span

EXPANSION_TYPES = (
    "simple_expansion",
    "expansion",
    "command_substitution",
    "arithmetic_expansion",
    "process_substitution",
)


def iter_chars(data: bytes, start: int, end: int) -> Iterator[Tuple[str, int, int]]:
    """Characters of data[start:end] with their byte offsets; invalid UTF-8 bytes become U+FFFD."""
    index = start
    while index < end:
        lead = data[index]
        width = 1 if lead < 0x80 else 2 if lead >> 5 == 6 else 3 if lead >> 4 == 14 else 4 if lead >> 3 == 30 else 1
        chunk = data[index : min(index + width, end)]
        try:
            char = chunk.decode("utf-8")
        except UnicodeDecodeError:
            char, width = "\ufffd", 1
        yield char, index, index + width
        index += width


def node_text(doc: Doc, node: Node) -> str:
    return doc.data[node.start_byte : node.end_byte].decode("utf-8", errors="replace")


def shorten(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def literal(doc: Doc, start: int, end: int, mode: str) -> List[Piece]:
    """Literal text with quote removal. mode: 'word' (unquoted), 'dquote', 'raw'."""
    text = doc.data[start:end]
    if text.isascii() and (mode == "raw" or b"\\" not in text):
        # Nothing to remove and one byte per character (most words): the same piece, without the walk.
        return [Piece(text=text.decode("ascii"), spans=_byte_spans(doc, start, end))] if text else []
    chars: List[str] = []
    spans: List[Span] = []
    items = list(iter_chars(doc.data, start, end))
    index = 0
    while index < len(items):
        char, char_start, char_end = items[index]
        if char == "\\" and mode != "raw" and index + 1 < len(items):
            following, _, following_end = items[index + 1]
            if following == "\n":
                index += 2
                continue
            if following == "\r" and index + 2 < len(items) and items[index + 2][0] == "\n":
                index += 3  # CRLF files: treat `\`+CRLF as a continuation, like the parser does
                continue
            if mode == "word" or following in '$`"\\':
                chars.append(following)
                spans.append(doc.span(char_start, following_end))
                index += 2
                continue
        chars.append(char)
        spans.append(doc.span(char_start, char_end))
        index += 1
    if not chars:
        return []
    return [Piece(text="".join(chars), spans=tuple(spans))]


def _byte_spans(doc: Doc, start: int, end: int) -> Tuple[Span, ...]:
    """The span of each byte of data[start:end], one character each."""
    if doc.starts is None:
        return tuple(zip(range(start, end), range(start + 1, end + 1)))
    return tuple(doc.span(index, index + 1) for index in range(start, end))


def effective_start(doc: Doc, node: Node) -> int:
    # tree-sitter-bash lets an expansion inside "..." start at the whitespace before its `$`.
    position = node.start_byte
    while position < node.end_byte and doc.data[position : position + 1] in (b" ", b"\t", b"\n", b"\r"):
        position += 1
    return position


def adjacent_groups(nodes: Sequence[Node]) -> List[List[Node]]:
    """Nodes with no whitespace between them form one shell word."""
    groups: List[List[Node]] = []
    for node in nodes:
        if groups and groups[-1][-1].end_byte == node.start_byte:
            groups[-1].append(node)
        else:
            groups.append([node])
    return groups
