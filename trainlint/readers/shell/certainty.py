"""What bash itself rejects, told apart from what only tree-sitter-bash fails to parse.

tree-sitter-bash does not recover from some constructs bash accepts (a zsh-style `${(s:,:)x}`, which bash
only rejects when it runs the line; a substring expansion inside an array; a `\\` on the last line; a here-doc
with no command). Calling those syntax errors would be an error-level finding on a script that runs. This
module is a small scanner that follows bash's own parser in what it checks before running anything: quotes,
`$(...)`, `${...}`, back-quotes, here-docs, and the pairing of `if`/`fi`, `do`/`done`, `case`/`esac`, `{`/`}`
and `(`/`)`. It answers only when it is sure: a `Verdict` with `error` set means bash rejects the file; a
construct it does not follow makes it `certain=False`, and the caller then reports nothing as a syntax error.
It also records where each `${...}` and here-doc starts and ends, so that the reader can mask the ones
tree-sitter cannot parse and read the rest of the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List, Optional, Tuple

from trainlint.readers.shell.bash_words import MAX_NESTING, BashError, Rejected, Unsure, WordScanner

Span = Tuple[int, int]

_OPENERS = {b"if": "if", b"while": "loop", b"until": "loop", b"for": "loop", b"select": "loop", b"case": "case"}
_CLOSERS = {b"fi": ("then", "else"), b"done": ("do",), b"esac": ("case-body", "case-pattern")}
_CLOSER_OPENS = {b"fi": "if ... then", b"done": "do", b"esac": "case"}
_RESERVED = frozenset(_OPENERS) | frozenset(_CLOSERS) | {b"then", b"do", b"elif", b"else", b"{", b"}", b"[[", b"!",
                                                          b"time", b"function", b"in"}
_PLAIN_RUN = re.compile(rb"(?:[ \t\r]+|\\\n|[^ \t\r\n;&|()<>\\'\"`$#{}][^ \t\r\n;&|()<>\\'\"`$]*)+")
_CLOSING_WORDS = frozenset(_CLOSERS) | {b"}"}
_OPENER_TEXT = {"loop": "while/for", "then": "if", "else": "if", "elif": "if", "do": "do", "case-body": "case",
                "case-pattern": "case"}


@dataclass(frozen=True)
class Verdict:
    error: Optional[BashError]
    certain: bool
    expansions: Tuple[Span, ...]
    heredocs: Tuple[Span, ...]
    # `` `# a note` `` written as a word of its own: a command substitution of a comment, which expands to nothing
    empty_substitutions: Tuple[Span, ...] = ()

    @property
    def rejected(self) -> bool:
        return self.error is not None


def judge(data: bytes) -> Verdict:
    scanner = _Scanner(data)
    try:
        scanner.scan_list(None, 0)
        return Verdict(None, True, tuple(scanner.expansions), tuple(scanner.heredocs),
                       tuple(scanner.empty_substitutions))
    except Rejected as rejected:
        return Verdict(rejected.error, True, tuple(scanner.expansions), tuple(scanner.heredocs))
    except (Unsure, RecursionError):
        return Verdict(None, False, tuple(scanner.expansions), tuple(scanner.heredocs))


def expansion_end(data: bytes, position: int, end: int) -> Optional[int]:
    """Where the `$(...)`, `$((...))`, `${...}` or back-quoted expansion at `position` ends, as bash pairs it
    inside double quotes (nested quotes and expansions included); None when it does not end before `end` or
    the scanner cannot tell."""
    scanner = _Scanner(data[:end])
    scanner.pos = position
    try:
        scanner.scan_char(0, in_dquote=True)
    except (Rejected, Unsure, RecursionError):
        return None
    return scanner.pos if scanner.pos > position + 1 else None


class _Scanner(WordScanner):
    """Command lists: separators, reserved words and their pairing, subshells, redirections."""

    def scan_list(self, opener: Optional[int], depth: int) -> None:
        """Commands up to the `)` of the subshell or `$(` opened at `opener`, or to the end of the file."""
        if depth > MAX_NESTING:
            raise Unsure()
        data, size = self.data, len(self.data)
        compounds: List[Tuple[str, int]] = []
        command_start = True
        can_define = False  # the last token may name a function: `name ()`
        naming_function = False  # the word after `function`
        after_closer = False
        while True:
            if self.pos >= size:
                if compounds:
                    kind, offset = compounds[-1]
                    self.unclosed(_OPENER_TEXT.get(kind, kind), offset)
                if opener is not None:
                    self.unclosed(data[opener : opener + 2].decode().rstrip("(") + "(", opener)
                return
            kind = compounds[-1][0] if compounds else None
            # words that cannot be reserved words: not at a command's start, after a closer, or in a `case` head
            if not (command_start or after_closer or naming_function or kind in ("case", "case-pattern")) \
                    and self.skip_plain_words():
                can_define = False
                continue
            char = data[self.pos : self.pos + 1]
            if char not in (b" ", b"\t", b"\r"):
                after_closer, was_after_closer = False, after_closer
            if char in (b" ", b"\t", b"\r"):
                self.pos += 1
                continue
            if char == b"\\" and data[self.pos + 1 : self.pos + 2] == b"\n":
                self.pos += 2
                continue
            if char == b"\n":
                self.pos += 1
                self.read_heredoc_bodies()
                command_start, can_define = True, False
            elif char == b"#":
                end = data.find(b"\n", self.pos)
                self.pos = size if end < 0 else end
            elif char == b";":
                self.separator(compounds)
                command_start, can_define = True, False
            elif char == b"&" and data[self.pos + 1 : self.pos + 2] == b">":
                self.pos += 1
                self.redirection(depth)
                can_define = False
            elif char in (b"&", b"|"):
                self.pos += 2 if data[self.pos + 1 : self.pos + 2] in (b"&", b"|") else 1
                command_start, can_define = True, False
            elif char == b")":
                if kind == "case-pattern":
                    self.pos += 1
                    compounds[-1] = ("case-body", compounds[-1][1])
                    command_start, can_define = True, False
                elif opener is not None and not compounds:
                    self.pos += 1
                    return
                elif compounds:
                    self.reject(self.pos, f"`)` before the `{_OPENER_TEXT.get(kind, kind)}` it encloses is closed")
                else:
                    self.reject(self.pos, "this `)` has no matching `(`")
            elif char == b"(":
                self.open_paren(kind, command_start, can_define, depth)
                command_start, can_define = True, False
            elif char in (b"<", b">"):
                self.redirection(depth)
                command_start, can_define = False, False
            else:
                word_start = self.pos
                word = self.scan_word(depth, kind == "case-pattern")
                if kind == "case-pattern":
                    if word == b"esac":
                        compounds.pop()
                        command_start = False
                elif naming_function:
                    command_start, can_define, naming_function = True, True, False
                elif command_start or (was_after_closer and word in _CLOSING_WORDS):
                    # a reserved word right after `}`/`fi`/`done` is still read as one: `{ { echo; } }`
                    command_start = self.keyword(word, word_start, compounds, depth)
                    can_define = not command_start and word not in _RESERVED
                    naming_function = word == b"function"
                    after_closer = word in _CLOSING_WORDS
                    continue
                else:
                    can_define = False
                    if kind == "case" and word == b"in":
                        compounds[-1] = ("case-pattern", compounds[-1][1])

    def skip_plain_words(self) -> bool:
        """Skips blanks, continuations and words without quotes or expansions (the arguments of a long command
        line) at once. The last word stays when a `(` follows it: `NAME=(` opens an array."""
        match = _PLAIN_RUN.match(self.data, self.pos)
        if match is None:
            return False
        end = match.end()
        if self.data[end : end + 1] == b"(":
            end = max(self.data.rfind(blank, self.pos, end) for blank in (b" ", b"\t", b"\r", b"\n")) + 1
        if end <= self.pos:
            return False
        self.pos = end
        return True

    def separator(self, compounds: List[Tuple[str, int]]) -> None:
        data = self.data
        if data[self.pos : self.pos + 2] == b";;" or data[self.pos : self.pos + 2] == b";&":
            length = 3 if data[self.pos : self.pos + 3] == b";;&" else 2
            if not compounds or compounds[-1][0] != "case-body":
                self.reject(self.pos, f"`{data[self.pos : self.pos + length].decode()}` outside a `case`")
            compounds[-1] = ("case-pattern", compounds[-1][1])
            self.pos += length
            return
        self.pos += 1

    def keyword(self, word: bytes, offset: int, compounds: List[Tuple[str, int]], depth: int) -> bool:
        """Handles a reserved word at the start of a command; True when a command may start after it."""
        kind = compounds[-1][0] if compounds else None
        if word in _OPENERS:
            compounds.append((_OPENERS[word], offset))
            if word == b"for" and self.next_is(b"(("):
                self.skip_blanks()
                self.pos += 2
                self.scan_arithmetic(self.pos - 2, depth + 1, b"))")
                return True  # bash reads `do` right after `for ((...))`, with or without a `;` between
            return word in (b"if", b"while", b"until")
        if word == b"then":
            if kind not in ("if", "elif"):
                self.reject(offset, "`then` without a matching `if`")
            compounds[-1] = ("then", compounds[-1][1])
            return True
        if word == b"do":
            if kind != "loop":
                self.reject(offset, "`do` without a matching `for`/`while`")
            compounds[-1] = ("do", compounds[-1][1])
            return True
        if word in (b"elif", b"else"):
            if kind != "then":
                self.reject(offset, f"`{word.decode()}` without a matching `if ... then`")
            compounds[-1] = (word.decode(), compounds[-1][1])
            return True
        if word in _CLOSERS:
            if kind not in _CLOSERS[word]:
                self.reject(offset, f"`{word.decode()}` without a matching `{_CLOSER_OPENS[word]}`")
            compounds.pop()
            return False
        if word == b"{":
            compounds.append(("{", offset))
            return True
        if word == b"}":
            if kind != "{":
                self.reject(offset, "`}` without a matching `{`")
            compounds.pop()
            return False
        if word == b"[[":
            self.scan_conditional(offset, depth)
            return False
        return word in (b"!", b"time")

    def open_paren(self, kind: Optional[str], command_start: bool, can_define: bool, depth: int) -> None:
        data = self.data
        opener = self.pos
        if kind == "case-pattern":
            self.pos += 1  # the optional `(` before a pattern
            return
        self.pos += 1
        if can_define and self.next_is(b")"):
            self.pos = data.index(b")", self.pos) + 1  # `name ()`: a function definition
            return
        if not command_start:
            raise Unsure()
        if data[opener : opener + 2] == b"((":
            self.pos += 1
            self.scan_arithmetic(opener, depth + 1, b"))")
            return
        self.scan_list(opener, depth + 1)

    def redirection(self, depth: int) -> None:
        data = self.data
        if data[self.pos + 1 : self.pos + 2] == b"(":  # process substitution
            self.pos += 2
            self.scan_list(self.pos - 2, depth + 1)
            return
        if data[self.pos : self.pos + 3] == b"<<<":
            self.pos += 3
            return
        if data[self.pos : self.pos + 2] == b"<<":
            start = self.pos
            strip_tabs = data[self.pos + 2 : self.pos + 3] == b"-"
            self.pos += 3 if strip_tabs else 2
            self.skip_blanks()
            word_start = self.pos
            self.scan_word(depth, False)
            delimiter = data[word_start : self.pos].replace(b"'", b"").replace(b'"', b"").replace(b"\\", b"")
            if not delimiter:
                raise Unsure()
            self.pending.append((start, delimiter, strip_tabs))
            return
        operator = self.pos
        self.pos += 1
        while data[self.pos : self.pos + 1] in (b">", b"&", b"|"):
            self.pos += 1
        self._expect_target(operator)

    def _expect_target(self, operator: int) -> None:
        """A redirection names its file next, on the same line (or after a `\\`-newline): an operator, a comment or
        the end of the line there is bash's "syntax error near unexpected token" (`PATH=<YOUR_PATH>` leaves `>` with
        nothing after it)."""
        while True:
            self.skip_blanks()
            if self.data[self.pos : self.pos + 2] != b"\\\n":
                break
            self.pos += 2
        following = self.data[self.pos : self.pos + 1]
        if following in (b"<", b">") and self.data[self.pos + 1 : self.pos + 2] == b"(":
            return  # a process substitution is the file: `done < <(ls)`
        if following in (b"", b"\n", b";", b"|", b"&", b")", b"<", b">", b"#"):
            text = self.data[operator : self.pos].strip().decode("utf-8", errors="replace")
            placeholder = self._placeholder(operator)
            if placeholder is not None:
                self.reject(operator, f"`{placeholder}` reads as redirections, and the last, `{text}`, has no file "
                                      "after it (a placeholder left to fill in?)")
            self.reject(operator, f"the redirection `{text}` has no file after it")

    def _placeholder(self, operator: int) -> Optional[str]:
        """`<Specify path>` when the `>` at `operator` closes such a run on its line: a template's blank."""
        data = self.data
        line_start = data.rfind(b"\n", 0, operator) + 1
        opening = data.rfind(b"<", line_start, operator)
        inside = data[opening + 1 : operator]
        if opening < 0 or data[operator : operator + 1] != b">" or not inside.strip() or b">" in inside:
            return None
        return data[opening : operator + 1].decode("utf-8", errors="replace")
