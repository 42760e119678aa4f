"""argparse: `add_argument(...)` defaults (store_true / store_false included) and whether unknown
arguments are tolerated (`parse_known_args`, `return_remaining_strings=True`)."""

from __future__ import annotations

from typing import Mapping, Optional, Tuple

import libcst as cst

from trainlint.core import Setting, SourceKind
from trainlint.readers.facts import FieldDefault
from trainlint.readers.python.expressions import keyword_args, literal_value
from trainlint.readers.python.values import ValueReader


def read_add_argument(values: ValueReader, node: cst.Call) -> Optional[FieldDefault]:
    """The argument a `parser.add_argument(...)` call declares, when its option names are constants."""
    ctx = values.ctx
    names = [literal_value(arg.value) for arg in node.args if arg.keyword is None and not arg.star]
    if not names or not all(isinstance(name, str) for name in names):
        return None
    options = tuple(str(name) for name in names)
    keywords = keyword_args(node)
    dest = _argparse_dest(options, keywords)
    if dest is None:
        return None
    note = f"argparse {options[0]}"
    kind = SourceKind.ARGPARSE_DEFAULT
    action_arg = keywords.get("action")
    action = literal_value(action_arg.value) if action_arg is not None else None
    type_name = ctx.text(keywords["type"].value) if "type" in keywords else ""
    default: Optional[Setting] = None
    if "default" in keywords:
        default = values.keyword(dest, keywords["default"].value, kind, note).setting
    elif action in ("store_true", "store_false") and action_arg is not None:
        implied = action == "store_false"
        default = Setting(
            implied,
            kind,
            ctx.origin(action_arg.value),
            ctx.text(action_arg.value),
            note=f"{note} (implied by {action})",
        )
    if action in ("store_true", "store_false") and not type_name:
        type_name = "bool"
    switch_sets = {"store_true": True, "store_false": False}.get(action) if isinstance(action, str) else None
    return FieldDefault(dest, default, "argparse", options, type_name, ctx.origin(node), switch_sets)


def returns_remaining_strings(node: cst.Call) -> bool:
    """`parse_args_into_dataclasses(return_remaining_strings=True)`: unknown arguments are tolerated."""
    remaining = keyword_args(node).get("return_remaining_strings")
    return remaining is not None and literal_value(remaining.value) is True


def _argparse_dest(options: Tuple[str, ...], keywords: Mapping[str, cst.Arg]) -> Optional[str]:
    """The attribute name argparse stores the option under."""
    if "dest" in keywords:
        dest = literal_value(keywords["dest"].value)
        return dest if isinstance(dest, str) else None
    if not options[0].startswith("-"):
        return options[0]  # positional argument
    long_options = [option for option in options if option.startswith("--")]
    chosen = long_options[0] if long_options else options[0]
    return chosen.lstrip("-").replace("-", "_") or None
