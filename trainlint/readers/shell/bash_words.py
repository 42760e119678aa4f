"""Words as bash's parser reads them before running anything: quotes, expansions, here-docs, `[[ ... ]]`.

The lower half of the scanner in `certainty`: it follows a word to its end, pairing quotes, `$(...)`,
`${...}` and back-quotes, and raises `Rejected` where bash itself stops (an unclosed quote) or `Unsure`
where the scanner does not follow bash closely enough to tell.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List, Tuple

Span = Tuple[int, int]

MAX_NESTING = 150
METACHARS = b" \t\r\n;&|()<>"
_ASSIGNMENT = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=$")
_PLAIN_WORD = re.compile(rb"[^ \t\r\n;&|()<>\\'\"`$]+")
_PLAIN_DQUOTE = re.compile(rb'[^"\\$`]+')


def _comment_only(data: bytes, start: int, end: int) -> bool:
    """`` `# a note` `` from `start` to `end`, a word of its own (a blank or a line start before it; a blank, a line
    end, a `\\`-newline or the end of the file after it): bash runs a comment and the word expands to nothing."""
    body = data[start + 1 : end - 1]
    if b"\n" in body or not body.lstrip(b" \t").startswith(b"#"):
        return False
    before = data[start - 1 : start] if start else b"\n"
    after = data[end : end + 1]
    return before in (b" ", b"\t", b"\n") and (after in (b"", b" ", b"\t", b"\n", b"\r")
                                                  or data[end : end + 2] == b"\\\n")


@dataclass(frozen=True)
class BashError:
    """Where bash's parser stops, and what it says in words a reader of the launcher understands."""

    offset: int
    message: str


class Rejected(Exception):
    def __init__(self, error: BashError) -> None:
        super().__init__(error.message)
        self.error = error


class Unsure(Exception):
    """A construct the scanner does not follow; nothing can be said with certainty."""


class WordScanner:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0
        self.expansions: List[Span] = []
        self.heredocs: List[Span] = []
        self.empty_substitutions: List[Span] = []
        self.pending: List[Tuple[int, bytes, bool]] = []  # here-docs whose body starts at the next newline

    def reject(self, offset: int, message: str) -> None:
        raise Rejected(BashError(offset, message))

    def unclosed(self, opener: str, offset: int) -> None:
        self.reject(offset, f"the `{opener}` here is never closed before the end of the file")

    def next_is(self, text: bytes) -> bool:
        position = self.pos
        while self.data[position : position + 1] in (b" ", b"\t"):
            position += 1
        return self.data[position : position + len(text)] == text

    def next_is_empty_parens(self) -> bool:
        """`()` (blanks allowed inside) at the position: a function definition's."""
        position = self.pos + 1
        while self.data[position : position + 1] in (b" ", b"\t"):
            position += 1
        return self.data[position : position + 1] == b")"

    def skip_blanks(self) -> None:
        while self.data[self.pos : self.pos + 1] in (b" ", b"\t"):
            self.pos += 1

    def read_heredoc_bodies(self) -> None:
        data, size = self.data, len(self.data)
        for start, delimiter, strip_tabs in self.pending:
            while self.pos < size:
                end = data.find(b"\n", self.pos)
                end = size if end < 0 else end
                line = data[self.pos : end].rstrip(b"\r")
                self.pos = min(end + 1, size)
                if (line.lstrip(b"\t") if strip_tabs else line) == delimiter:
                    break
            self.heredocs.append((start, self.pos))
        self.pending = []

    # --- words -------------------------------------------------------------------------------------------
    def scan_word(self, depth: int, in_pattern: bool) -> bytes:
        """One word, with its quotes and expansions; returns its raw bytes."""
        data, size = self.data, len(self.data)
        start = self.pos
        while self.pos < size:
            plain = _PLAIN_WORD.match(data, self.pos)
            if plain is not None:
                self.pos = plain.end()
                continue
            char = data[self.pos : self.pos + 1]
            if char in METACHARS:
                if char == b"(" and not in_pattern:
                    if _ASSIGNMENT.match(data[start : self.pos]):
                        self.scan_array(depth + 1)
                        continue
                    if self.pos > start and not self.next_is_empty_parens():
                        raise Unsure()  # extglob `@(...)`, or something bash reads differently
                if char == b"|" and in_pattern:
                    self.pos += 1
                    continue
                break
            self.scan_char(depth, in_dquote=False)
        return data[start : self.pos]

    def scan_char(self, depth: int, in_dquote: bool) -> None:
        """One character of a word, or a whole quoted part or expansion starting at it."""
        data = self.data
        char = data[self.pos : self.pos + 1]
        start = self.pos
        if char == b"\\":
            self.pos += 2
        elif char == b"'" and not in_dquote:
            end = data.find(b"'", self.pos + 1)
            if end < 0:
                self.unclosed("'", start)
            self.pos = end + 1
        elif char == b'"':
            self.pos += 1
            self.scan_dquote(start, depth + 1)
        elif char == b"`":
            self.scan_backquote()
            if not in_dquote and _comment_only(data, start, self.pos):
                self.empty_substitutions.append((start, self.pos))
        elif char == b"$":
            following = data[self.pos + 1 : self.pos + 2]
            if following == b"'" and not in_dquote:
                self.pos += 2
                while True:
                    if self.pos >= len(data):
                        self.unclosed("$'", start)
                    if data[self.pos : self.pos + 1] == b"\\":
                        self.pos += 2
                    elif data[self.pos : self.pos + 1] == b"'":
                        self.pos += 1
                        return
                    else:
                        self.pos += 1
            elif following == b"(":
                if data[self.pos + 2 : self.pos + 3] == b"(":
                    self.pos += 3
                    self.scan_arithmetic(start, depth + 1, b"))")
                else:
                    self.pos += 2
                    self.scan_list(start, depth + 1)
            elif following == b"{":
                self.pos += 2
                self.scan_brace(start, depth + 1, in_dquote)
            elif following == b"[":
                self.pos += 2
                self.scan_arithmetic(start, depth + 1, b"]")
            else:
                self.pos += 1
        else:
            self.pos += 1

    def scan_dquote(self, start: int, depth: int) -> None:
        if depth > MAX_NESTING:
            raise Unsure()
        data, size = self.data, len(self.data)
        while True:
            if self.pos >= size:
                self.unclosed('"', start)
            char = data[self.pos : self.pos + 1]
            if char == b'"':
                self.pos += 1
                return
            plain = _PLAIN_DQUOTE.match(data, self.pos)
            if plain is not None:
                self.pos = plain.end()
            elif char == b"\\":
                self.pos += 2
            elif char in (b"$", b"`"):
                self.scan_char(depth, in_dquote=True)
            else:
                self.pos += 1

    def scan_backquote(self) -> None:
        start = self.pos
        self.pos += 1
        data, size = self.data, len(self.data)
        while True:
            if self.pos >= size:
                self.unclosed("`", start)
            char = data[self.pos : self.pos + 1]
            if char == b"\\":
                self.pos += 2
            elif char == b"`":
                self.pos += 1
                return
            else:
                self.pos += 1

    def scan_brace(self, start: int, depth: int, in_dquote: bool) -> None:
        """`${...}`: bash only pairs quotes and nested expansions here; the operator is checked when it runs."""
        if depth > MAX_NESTING:
            raise Unsure()
        data, size = self.data, len(self.data)
        while True:
            if self.pos >= size:
                self.unclosed("${", start)
            char = data[self.pos : self.pos + 1]
            if char == b"}":
                self.pos += 1
                self.expansions.append((start, self.pos))
                return
            if char == b"'" and in_dquote:
                raise Unsure()  # bash quotes here for some operators and not for others
            self.scan_char(depth, in_dquote=False)

    def scan_arithmetic(self, start: int, depth: int, closer: bytes) -> None:
        if depth > MAX_NESTING:
            raise Unsure()
        data, size = self.data, len(self.data)
        parens = 0
        while True:
            if self.pos >= size:
                self.unclosed(data[start : start + 3].decode("utf-8", "replace").rstrip(), start)
            if parens == 0 and data[self.pos : self.pos + len(closer)] == closer:
                self.pos += len(closer)
                return
            char = data[self.pos : self.pos + 1]
            if char == b"(":
                parens += 1
                self.pos += 1
            elif char == b")":
                if parens == 0:
                    raise Unsure()  # `$((cmd) )`: bash reads it again as a command substitution
                parens -= 1
                self.pos += 1
            elif char in (b"'", b'"', b"`", b"$", b"\\"):
                self.scan_char(depth, in_dquote=False)
            else:
                self.pos += 1

    def scan_array(self, depth: int) -> None:
        """`NAME=( words... )`: words, newlines and comments up to the `)`."""
        start = self.pos
        self.pos += 1
        data, size = self.data, len(self.data)
        while True:
            if self.pos >= size:
                self.unclosed("(", start)
            char = data[self.pos : self.pos + 1]
            if char == b")":
                self.pos += 1
                return
            if char in (b" ", b"\t", b"\n", b"\r"):
                self.pos += 1
            elif char == b"#":
                end = data.find(b"\n", self.pos)
                self.pos = size if end < 0 else end
            elif char in METACHARS:
                raise Unsure()
            else:
                self.scan_word(depth, False)

    def scan_conditional(self, start: int, depth: int) -> None:
        """`[[ ... ]]`: words and operators up to a `]]` word; `;` or a lone `|`/`&` inside is an error."""
        data, size = self.data, len(self.data)
        while True:
            if self.pos >= size:
                self.unclosed("[[", start)
            char = data[self.pos : self.pos + 1]
            if char in (b" ", b"\t", b"\n", b"\r"):
                self.pos += 1
            elif char == b"\\" and data[self.pos + 1 : self.pos + 2] == b"\n":
                self.pos += 2
            elif char in (b"|", b"&") and data[self.pos + 1 : self.pos + 2] != char:
                raise Unsure()  # a regular expression after `=~` may hold `|`
            elif char == b";":
                self.reject(self.pos, "`;` inside a `[[ ... ]]` test (is a space missing before `]]`?)")
            elif char in (b"|", b"&"):
                self.pos += 2
            elif char in (b"(", b")", b"<", b">"):
                self.pos += 1
            else:
                word = self.scan_conditional_word(depth)
                if word == b"]]":
                    return

    def scan_conditional_word(self, depth: int) -> bytes:
        data, size = self.data, len(self.data)
        start = self.pos
        while self.pos < size and data[self.pos : self.pos + 1] not in METACHARS:
            self.scan_char(depth, in_dquote=False)
        return data[start : self.pos]
