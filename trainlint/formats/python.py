"""Python entry scripts: libcst parsing, comments and logical lines from Python's tokenizer, syntax errors.

The reader (`trainlint.readers.python.loading`) still calls libcst itself, with its own screening for text
too deeply nested to parse safely; this module serves the questions asked about a file as a whole."""
from __future__ import annotations

import io
import tokenize
from typing import TYPE_CHECKING, List, Optional, Tuple

from trainlint.formats.lines import Comment, Lines, LogicalLines, comment, hash_comments

if TYPE_CHECKING:
    import libcst as cst

KIND = "python"
NAME = "Python"


def parse(data: bytes) -> cst.Module:
    import libcst as cst  # lazy: libcst costs ~300 ms to import and a warm scan may parse no Python

    return cst.parse_module(data)


def _tokens(data: bytes) -> Optional[Tuple[List[Comment], LogicalLines]]:
    """Comment tokens and logical lines (statements across brackets), or None when the text does not tokenize."""
    lines = Lines(data)
    found: List[Comment] = []
    spans: LogicalLines = {}
    first: Optional[int] = None
    try:
        for token in tokenize.tokenize(io.BytesIO(data).readline):
            if token.type in (tokenize.ENCODING, tokenize.ENDMARKER):
                continue
            if token.type == tokenize.COMMENT:
                start = _byte_offset(lines, token.start)
                found.append(comment(data, start, start + len(token.string.encode("utf-8"))))
                continue
            if token.type in (tokenize.NL, tokenize.INDENT, tokenize.DEDENT):
                continue
            if first is None:
                first = token.start[0]
            if token.type == tokenize.NEWLINE:
                for line in range(first, token.end[0] + 1):
                    spans[line] = (first, token.end[0])
                first = None
    except (tokenize.TokenError, SyntaxError, UnicodeDecodeError):
        return None
    return found, spans


def comments(data: bytes) -> List[Comment]:
    """Comment tokens; a file that does not tokenize still has its trainlint comments found line by line."""
    tokens = _tokens(data)
    return hash_comments(data) if tokens is None else tokens[0]


def logical_lines(data: bytes) -> LogicalLines:
    tokens = _tokens(data)
    return {} if tokens is None else tokens[1]


def _byte_offset(lines: Lines, position: Tuple[int, int]) -> int:
    row, column = position
    start, _ = lines.span(row)
    prefix = lines.text(row).decode("utf-8", "replace")[:column]
    return start + len(prefix.encode("utf-8"))


def syntax_errors(data: bytes) -> int:
    """1 when libcst rejects the text, else 0."""
    import libcst as cst  # lazy, as in parse

    try:
        parse(data)
    except (cst.ParserSyntaxError, UnicodeDecodeError, ValueError):
        return 1
    return 0
