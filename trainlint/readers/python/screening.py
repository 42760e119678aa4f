"""Screening text that libcst cannot parse safely, before it is handed to the parser."""

from __future__ import annotations

import io
import tokenize
from dataclasses import dataclass
from typing import Optional

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


def too_deep_to_parse(text: str) -> Optional[TooDeep]:
    """Where the text first nests deeper than libcst can parse safely, else None."""
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
