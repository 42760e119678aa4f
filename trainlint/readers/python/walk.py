"""The children of a libcst node in the order libcst's own visit takes them, without the copy of every node
libcst's visit makes on the way (most of a walk's cost).

The order is read from libcst's `_visit_and_replace_children` of each node type (the attribute names it visits,
in the order it visits them), once per type. Whitespace, brackets and separators are left out: no setting is
written in them and no origin is asked of them."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import re
import textwrap
from functools import lru_cache
from typing import Iterator, List, Tuple

import libcst as cst

UNWALKED = re.compile(
    r"whitespace.*|lpar|rpar|comma|semicolon|leading_lines|lines_after_decorators|trailing_whitespace|header|footer"
    r"|equal|colon|dot|newline|operator|asynchronous|star_tok"
)


def children(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The node's children worth walking, in libcst's visiting order."""
    for name in visit_order(type(node)):
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            yield value
        elif isinstance(value, (list, tuple)):
            for item in value:
                if isinstance(item, cst.CSTNode):
                    yield item


@lru_cache(maxsize=None)
def visit_order(kind: type) -> Tuple[str, ...]:
    names: List[str] = []
    try:
        source = textwrap.dedent(inspect.getsource(kind._visit_and_replace_children))  # type: ignore[attr-defined]
        calls = [
            node
            for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id.startswith("visit_")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
        ]
        calls.sort(key=lambda call: (call.lineno, call.col_offset))
        names = [call.args[1].value for call in calls]  # type: ignore[attr-defined]
    except (OSError, TypeError, SyntaxError):  # no source to read: the fields' order
        pass
    if dataclasses.is_dataclass(kind):  # whatever the source did not name, last
        names += [field.name for field in dataclasses.fields(kind)]
    return tuple(name for name in dict.fromkeys(names) if not UNWALKED.fullmatch(name))
