"""What a script does with the arguments `parse_known_args()` leaves over: drops them (`args, _ = ...`, or
only prints them), or handles them itself (applies them to a config, hands them to another command)."""
from __future__ import annotations

import ast
from typing import Optional

from trainlint.readers.python.tree_nodes import TreeNodes, last_name


def known_args_rest_used(nodes: Optional[TreeNodes]) -> bool:
    """Whether the arguments `parse_known_args()` leaves over are bound to a name (`args, unknown = ...`)
    that the module reads again, other than to show it: the script then handles unknown flags itself. Read in
    the stdlib parser's tree of the whole text, by kind (None: it does not parse), since the statement that reads them
    need not hold a setting; only files that call parse_known_args get here."""
    if nodes is None:
        return True  # cannot tell: the rest may be read
    rests = set()
    for node in nodes.assignments:
        if isinstance(node.value, ast.Call) and _returns_rest(node.value):
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                if isinstance(target, (ast.Tuple, ast.List)) and len(target.elts) >= 2:
                    rest = target.elts[-1]  # (namespace, rest), or HfArgumentParser's (*dataclasses, rest)
                    if isinstance(rest, ast.Name) and rest.id != "_":
                        rests.add(rest.id)
                elif isinstance(target, ast.Name):
                    rests.add(target.id)  # the tuple kept whole: `parsed[-1]` may be read
    if not rests:
        return False
    shown_only = _shown_names(nodes)
    return any(node.id in rests and id(node) not in shown_only for node in nodes.loaded_names)


def _returns_rest(call: ast.Call) -> bool:
    """`parser.parse_known_args()`, or HfArgumentParser's `parse_args_into_dataclasses(return_remaining_strings=True)`:
    both hand back the arguments the parser does not know, last."""
    if not isinstance(call.func, ast.Attribute):
        return False
    if call.func.attr == "parse_known_args":
        return True
    return call.func.attr == "parse_args_into_dataclasses" and any(
        keyword.arg == "return_remaining_strings" and isinstance(keyword.value, ast.Constant)
        and keyword.value.value is True for keyword in call.keywords)


# Calls that only show a value (`ic(left_argv)`, `logger.info(f"unused: {unknown}")`): reading the leftover
# arguments there handles none of them.
_SHOWING_CALLS = frozenset({"print", "ic", "pprint", "debug", "info", "warning", "warn", "error", "log",
                            "print_rank_0"})


def _shown_names(nodes: TreeNodes) -> set:
    """Ids of the names read only to be shown: arguments of a showing call, as they are or in an f-string."""
    shown = set()
    for node in nodes.calls:
        if last_name(node.func) not in _SHOWING_CALLS:
            continue
        for argument in [*node.args, *(keyword.value for keyword in node.keywords)]:
            if isinstance(argument, ast.Name):
                shown.add(id(argument))
            elif isinstance(argument, ast.JoinedStr):
                shown.update(id(value.value) for value in argument.values
                             if isinstance(value, ast.FormattedValue) and isinstance(value.value, ast.Name))
    return shown
