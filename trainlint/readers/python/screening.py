"""Screening text that libcst cannot parse safely, before it is handed to the parser."""

from __future__ import annotations

import ast
import io
import re
import sys
import tokenize
from dataclasses import dataclass
from itertools import accumulate
from typing import List, Optional, Sequence, Tuple

# libcst's native parser overflows its stack (a segmentation fault, not an exception) on very deep
# syntax trees: thousands of chained operators or nested brackets. Such text is screened first.
MAX_CHAIN_TOKENS = 2000  # operators and call/subscript trailers in one statement
MAX_BRACKET_DEPTH = 100  # below CPython's own tokenizer limit (200), which 3.12+ raises before we count it
MAX_ELIF = 2000
CHAIN_OPERATORS = frozenset(
    {
        "+",
        "-",
        "*",
        "/",
        "//",
        "%",
        "**",
        "@",
        "<<",
        ">>",
        "&",
        "|",
        "^",
        "~",
        ".",
        "and",
        "or",
        "not",
        "lambda",
        "if",
        "else",
        "await",
    }
)


@dataclass(frozen=True)
class TooDeep:
    """Where and why a text nests deeper than libcst can parse safely."""

    line: int
    reason: str


# From 3.11 on, CPython's own parser and AST construction raise (RecursionError, MemoryError, SyntaxError)
# on text nested too deep for them; 3.10 can overflow its C stack building the tree of a long enough chain.
# Only there is the stdlib tree safe to build before the text is screened.
STDLIB_PARSER_GUARDS_DEPTH = sys.version_info >= (3, 11)

# What each token the scan counts is written with, at least one character of it: a bound of the scan's counts
# is the number of those characters (a string token holds two quotes; a keyword ends a run of word characters).
OPENING = re.compile(r"[^\n(\[{]+")
CHAINING = re.compile(r"[^\n+\-*/%@<>&|^~.(\[]+")
QUOTES = re.compile(r"[^\n\"']+")
CHAIN_KEYWORD = re.compile(r"(?:and|or|not|lambda|if|else|await)(?!\w)")
STATEMENT_BLOCKS = ("body", "orelse", "handlers", "finalbody", "cases")
STRING_STATEMENTS = (ast.Expr, ast.Assign, ast.AnnAssign)


def too_deep_to_parse(text: str, tree: Optional[ast.Module] = None) -> Optional[TooDeep]:
    """Where the text first nests deeper than libcst can parse safely, else None.

    `tree`: the stdlib's tree of the text, when known. The token scan is exact but costs a tenth of a second on
    a file of model code; the tree says where each logical line can be, and when no line holds enough
    brackets and operators to reach a limit, the scan cannot find any and is skipped."""
    if tree is not None and "\r" not in text.replace("\r\n", "") and _shallow(text, tree):
        return None
    return _scanned(text)


def _shallow(text: str, tree: ast.Module) -> bool:
    """True when no logical line of the text holds enough characters to reach a limit of the token scan."""
    if text.count("elif") <= MAX_ELIF:
        bounds = _LineBounds(text)
        return bounds.within(tree.body, 1, len(bounds.opening) - 1)
    return False


class _LineBounds:
    """Per line, running totals of the characters the scan's counted tokens are written with.

    A logical line lies within the lines of its statement; a compound statement's header and `else:`/`except`
    lines lie between the lines of its inner statements. The scan's bracket depth and operator chain restart at
    each logical line, so the characters on those lines bound them."""

    def __init__(self, text: str):
        self.opening = _running_counts(OPENING.sub("", text))
        self.chaining = _running_counts(CHAINING.sub("", CHAIN_KEYWORD.sub("+", text)))
        self.quotes = _running_counts(QUOTES.sub("", text))

    def within(self, statements: Sequence[ast.stmt], first: int, last: int) -> bool:
        """True when each statement, from the end of the one before it, is within the bounds, or is a compound
        statement whose header and inner statements are."""
        start = first
        for statement in statements:
            end = statement.end_lineno or statement.lineno
            if not self._bounded(start, end, _string_lines(statement)):
                inner = _inner_statements(statement)
                if not inner or not self.within(inner, start, end):
                    return False
            start = end
        return self._bounded(start, last)

    def _bounded(self, first: int, last: int, in_string: Tuple[int, int] = (0, -1)) -> bool:
        """`in_string`: lines (first, last) inside string tokens and the whitespace and comments between them,
        whose brackets and operators are no tokens."""
        skip_first, skip_last = in_string
        opened = self.opening[last] - self.opening[first - 1]
        chained = self.chaining[last] - self.chaining[first - 1]
        if skip_first <= skip_last:
            opened -= self.opening[skip_last] - self.opening[skip_first - 1]
            chained -= self.chaining[skip_last] - self.chaining[skip_first - 1]
        chained += (self.quotes[last] - self.quotes[first - 1]) // 2
        return opened <= MAX_BRACKET_DEPTH and chained <= MAX_CHAIN_TOKENS


def _string_lines(statement: ast.stmt) -> Tuple[int, int]:
    """The inner lines of a string written over lines as a statement's value (a docstring, `HELP = \"\"\"...`):
    every line between the first and the last of a string constant, implicit concatenation included, is inside
    a string token or between two (f-strings aside, whose fields hold code). (0, -1) when there are none."""
    value = getattr(statement, "value", None) if isinstance(statement, STRING_STATEMENTS) else None
    if isinstance(value, ast.Constant) and isinstance(value.value, (str, bytes)) and value.end_lineno:
        return value.lineno + 1, value.end_lineno - 1
    return 0, -1


def _running_counts(kept: str) -> List[int]:
    """Index n: the characters kept on lines 1..n (index 0: none)."""
    return [0, *accumulate(map(len, kept.split("\n")))]


def _inner_statements(statement: ast.stmt) -> List[ast.stmt]:
    """The statements in a compound statement's blocks, in the order they are written."""
    inner: List[ast.stmt] = []
    for name in STATEMENT_BLOCKS:
        for part in getattr(statement, name, None) or ():
            if isinstance(part, ast.stmt):
                inner.append(part)
            else:  # an `except` handler or a `case`: its own block
                inner.extend(part.body)
    inner.sort(key=lambda part: part.lineno)
    return inner


def _scanned(text: str) -> Optional[TooDeep]:
    """The exact scan: Python's tokenizer over the whole text."""
    chain = depth = elifs = 0
    previous: Optional[tokenize.TokenInfo] = None
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.NEWLINE:
                chain = 0
            elif tok.type == tokenize.OP and tok.string in "([{":
                depth += 1
                if previous is not None and _ends_operand(previous) and tok.string != "{":
                    chain += 1  # a call or subscript trailer: `f()()()` nests like an operator chain
            elif tok.type == tokenize.OP and tok.string in ")]}":
                depth -= 1
            elif tok.string in CHAIN_OPERATORS and tok.type in (tokenize.OP, tokenize.NAME):
                chain += 1
            elif tok.type == tokenize.STRING and previous is not None and previous.type == tokenize.STRING:
                chain += 1  # implicit concatenation is a nested node in libcst
            elif tok.type == tokenize.NAME and tok.string == "elif":
                elifs += 1
            if depth > MAX_BRACKET_DEPTH:
                return TooDeep(tok.start[0], f"brackets nested more than {MAX_BRACKET_DEPTH} deep")
            if chain > MAX_CHAIN_TOKENS:
                return TooDeep(tok.start[0], f"a statement chains more than {MAX_CHAIN_TOKENS} operators")
            if elifs > MAX_ELIF:
                return TooDeep(tok.start[0], f"more than {MAX_ELIF} `elif` branches")
            if tok.type not in (tokenize.NL, tokenize.COMMENT):
                previous = tok
    except (tokenize.TokenError, SyntaxError, ValueError):
        pass  # the parser reports the broken text itself
    return None


def _ends_operand(tok: tokenize.TokenInfo) -> bool:
    if tok.type == tokenize.NAME:
        return tok.string not in _KEYWORDS
    return tok.type == tokenize.STRING or (tok.type == tokenize.OP and tok.string in ")]")


_KEYWORDS = frozenset(
    {
        "and",
        "or",
        "not",
        "in",
        "is",
        "if",
        "else",
        "elif",
        "for",
        "while",
        "return",
        "yield",
        "lambda",
        "import",
        "from",
        "as",
        "with",
        "assert",
        "del",
        "global",
        "nonlocal",
        "raise",
        "try",
        "except",
        "finally",
        "class",
        "def",
        "pass",
        "break",
        "continue",
        "await",
        "async",
        "print",
    }
)
