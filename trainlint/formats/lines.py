"""Byte offsets of a file's lines and the comment spans every format reports, shared by the format modules."""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Dict, List, Tuple

# Line -> (first, last) line of the logical line it belongs to (a command continued by `\`, a
# statement across brackets). Lines not in the mapping stand alone.
LogicalLines = Dict[int, Tuple[int, int]]


@dataclass(frozen=True)
class Comment:
    """One comment: its bytes `start`..`end` (end exclusive, the line break excluded) and its text,
    comment marker included (`# ...`, `// ...`)."""

    start: int
    end: int
    text: str


class Lines:
    """Byte offsets of the lines of a file (1-based line numbers)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.starts = [0] + [index + 1 for index, byte in enumerate(data) if byte == 0x0A]

    def count(self) -> int:
        return len(self.starts)

    def span(self, line: int) -> Tuple[int, int]:
        """Bytes of the line without its line break."""
        start = self.starts[line - 1]
        end = self.starts[line] - 1 if line < len(self.starts) else len(self.data)
        if end > start and self.data[end - 1:end] == b"\r":
            end -= 1
        return start, end

    def text(self, line: int) -> bytes:
        start, end = self.span(line)
        return self.data[start:end]

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset)


def comment(data: bytes, start: int, end: int) -> Comment:
    return Comment(start, end, data[start:end].decode("utf-8", "replace"))


# Anything that looks like it is addressed to trainlint (the line-by-line fallback looks for nothing else).
_MARKER = re.compile(r"#\s*trainlint\s*:", re.IGNORECASE)


def hash_comments(data: bytes) -> List[Comment]:
    """`#` at the start of a line or after whitespace, to the end of the line (YAML's rule). Read line
    by line, without a parser, so only comments addressed to trainlint are kept: a `#` inside a quoted
    value is then rarely mistaken for one."""
    lines = Lines(data)
    found = []
    for number in range(1, lines.count() + 1):
        start, end = lines.span(number)
        text = data[start:end]
        for match in re.finditer(rb"(?:^|(?<=\s))#", text):
            if _MARKER.match(text[match.start():].decode("utf-8", "replace")):
                found.append(comment(data, start + match.start(), end))
                break
    return found
