"""What a YAML file's text alone rules out, before anyone parses it.

A scan reads every YAML file of a tree only to learn which ones are recipes (a recipe key at the top)
and to report the ones left partly unread (nesting or value bounds); most YAML files of a repository
are neither, and their round-trip parse is the scan's largest YAML cost. Each answer here is sound:
"no" means a full read (`trainlint.readers.yaml`) cannot find the key or stop at a bound; "maybe"
only means the file has to be read. No YAML library is imported here.
"""
from __future__ import annotations

import re
from typing import Iterable

# Bounds of the full read (`trainlint.readers.yaml` applies them).
MAX_DEPTH = 100
# Anchors reused inside anchors expand exponentially ("billion laughs"); stop well before that hurts.
MAX_VALUES = 20_000

# Line breaks the YAML reader knows beyond \n and \r (NEL, LS, PS), and the byte order mark: with
# any of them, columns counted here on bytes could differ from the reader's.
_UNUSUAL_TEXT = (b"\xc2\x85", b"\xe2\x80\xa8", b"\xe2\x80\xa9", b"\xef\xbb\xbf")
# Where a line's block collections may begin: its indentation, then after each block indicator
# (`- `, `? `, `: `) that opens it. Read loosely (any run of `-?:` counts): a larger set only costs a parse.
_LINE_PREFIX = re.compile(rb"^([ \t]*)((?:[-?:][ \t]*)*)", re.MULTILINE)
# Every scalar a mapping or sequence holds follows one of these (or is the document itself).
_VALUE_MARKS = (b":", b"-", b",", b"[", b"{", b"?")


def may_hold_key(data: bytes, keys: Iterable[str]) -> bool:
    """Whether a key spelt exactly like one of `keys` may be in the YAML text `data`. Only a
    double-quoted scalar can spell a key other than as written (escapes such as `\\x5f`)."""
    if b"\\" in data and b'"' in data:
        return True
    return any(key.encode("utf-8") in data for key in keys)


def may_reach_bounds(data: bytes) -> bool:
    """Whether a full read of `data` may stop at a bound (nesting deeper than MAX_DEPTH, more than
    MAX_VALUES values, the parser's recursion): only anchors repeat content, and without them every
    level of nesting and every value is written out in the text and counted here."""
    if b"&" in data or any(mark in data for mark in _UNUSUAL_TEXT):
        return True
    return _nesting_bound(data) > MAX_DEPTH or _value_bound(data) > MAX_VALUES


def _nesting_bound(data: bytes) -> int:
    """At least the number of collections any node sits in. Block collections nest at strictly
    growing columns (one mapping and the sequence it holds may share one), so at most two per column
    where one may begin; flow collections each need a `[` or `{` (a `[` may also hold a one-pair
    mapping)."""
    columns = set()
    lines = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    for indent, indicators in set(_LINE_PREFIX.findall(lines)):
        column = len(indent)
        columns.add(column)  # a key, or the first indicator
        columns.update(column + offset for offset, byte in enumerate(indicators) if byte not in b" \t")
        columns.add(column + len(indicators))  # what follows the last indicator
    return 2 * len(columns) + 2 * (data.count(b"[") + data.count(b"{"))


def _value_bound(data: bytes) -> int:
    return 1 + sum(data.count(mark) for mark in _VALUE_MARKS)
