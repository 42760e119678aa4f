"""Shell arithmetic: `$(( ))`, array indexes and substring offsets, in bash's integer semantics."""

from __future__ import annotations

from typing import List, Optional, Tuple

from trainlint.core import Setting, Unknown
from trainlint.readers.shell.base import ReaderBase
from trainlint.readers.shell.syntax import EXPANSION_TYPES, effective_start, node_text, shorten
from trainlint.readers.shell.values import Ctx, Node, Piece, State, computed, unique, value_of


def to_int(text: str) -> Optional[int]:
    text = text.strip()
    try:
        if text.startswith(("0x", "0X")):
            return int(text, 16)
        if len(text) > 1 and text.startswith("0") and text.isdigit():
            return int(text, 8)
        return int(text, 10)
    except ValueError:
        return None


def truncating_divmod(left: int, right: int) -> Tuple[int, int]:
    quotient = abs(left) // abs(right)
    if (left < 0) != (right < 0):
        quotient = -quotient
    return quotient, left - right * quotient


class ArithmeticMixin(ReaderBase):
    """Evaluates integer expressions over the known variables, or says why it cannot."""

    def _arithmetic_expansion(self, node: Node, ctx: Ctx, state: State, in_dquote: bool) -> List[Piece]:
        span = ctx.doc.span(effective_start(ctx.doc, node), node.end_byte)
        expressions = [child for child in node.named_children if child.type != "comment"]
        value, reason, via = (None, "an empty expression", ())  # type: ignore[assignment]
        for expression in expressions:
            value, reason, via = self._arith(expression, ctx, state)
        if value is None:
            unknown = Unknown(f"`{shorten(self._outer_text(span))}` uses {reason}")
            return [Piece(unknown=unknown, unknown_span=span, region=span, via=tuple(via))]
        return [computed(str(value), span, tuple(via), in_dquote)]

    def _arith(self, node: Node, ctx: Ctx, state: State) -> Tuple[Optional[int], str, Tuple[Setting, ...]]:
        """Integer value of an arithmetic expression, or None with the reason; plus the settings it read."""
        kind = node.type
        doc = ctx.doc
        if kind == "number":
            number = to_int(node_text(doc, node))
            return number, f"`{node_text(doc, node)}`", ()
        if kind in ("variable_name", "word"):
            name = node_text(doc, node)
            if name.isdigit():
                return int(name), "", ()
            span = self._node_span(doc, node)
            binding, explained = self._lookup(name, span, state, True, name)
            if binding is None:
                return None, explained[0].unknown.reason if explained and explained[0].unknown else name, ()
            value = value_of(binding.pieces) if not binding.is_unset else "0"
            number = to_int(value) if isinstance(value, str) else None
            reason = value.reason if isinstance(value, Unknown) else f"${name} = {value!r}, not an integer"
            return number, reason, binding.settings
        if kind in EXPANSION_TYPES or kind in ("string", "concatenation"):
            pieces = self._pieces(node, ctx, state, in_dquote=True)
            value = value_of(pieces)
            via = unique([s for p in pieces for s in p.via])
            if isinstance(value, Unknown):
                return None, value.reason, via
            number = to_int(value)
            return number, f"`{value}`, not an integer", via
        if kind == "parenthesized_expression":
            inner = node.named_children
            return self._arith(inner[0], ctx, state) if inner else (None, "an empty expression", ())
        if kind == "unary_expression":
            operator = node.children[0].type if node.children else ""
            operand = node.named_children[-1] if node.named_children else None
            if operand is None:
                return None, "an empty expression", ()
            value, reason, via = self._arith(operand, ctx, state)
            if value is None:
                return None, reason, via
            results = {"-": -value, "+": value, "!": int(not value), "~": ~value}
            return (results[operator], "", via) if operator in results else (None, f"`{operator}`", via)
        if kind == "binary_expression":
            return self._arith_binary(node, ctx, state)
        if kind == "ternary_expression":
            parts = node.named_children
            if len(parts) == 3:
                condition, reason, via = self._arith(parts[0], ctx, state)
                if condition is None:
                    return None, reason, via
                value, reason, more = self._arith(parts[1] if condition else parts[2], ctx, state)
                return value, reason, unique(list(via) + list(more))
        self._scan(node, ctx, state)
        return None, f"`{shorten(node_text(doc, node))}`, which is not modelled", ()

    def _arith_binary(self, node: Node, ctx: Ctx, state: State) -> Tuple[Optional[int], str, Tuple[Setting, ...]]:
        left_node = node.child_by_field_name("left")
        right_node = node.child_by_field_name("right")
        operator_node = node.child_by_field_name("operator")
        if left_node is None or right_node is None or operator_node is None:
            return None, "an incomplete expression", ()
        left, left_reason, left_via = self._arith(left_node, ctx, state)
        right, right_reason, right_via = self._arith(right_node, ctx, state)
        via = unique(list(left_via) + list(right_via))
        if left is None:
            return None, left_reason, via
        if right is None:
            return None, right_reason, via
        operator = operator_node.type
        if operator in ("/", "%"):
            if right == 0:
                return None, "a division by zero", via
            quotient, remainder = truncating_divmod(left, right)
            return (quotient if operator == "/" else remainder), "", via
        table = {
            "+": lambda: left + right,
            "-": lambda: left - right,
            "*": lambda: left * right,
            "**": lambda: left**right if 0 <= right < 64 else None,
            "<<": lambda: left << right if 0 <= right < 64 else None,
            ">>": lambda: left >> right if right >= 0 else None,
            "&": lambda: left & right,
            "|": lambda: left | right,
            "^": lambda: left ^ right,
            "<": lambda: int(left < right),
            ">": lambda: int(left > right),
            "<=": lambda: int(left <= right),
            ">=": lambda: int(left >= right),
            "==": lambda: int(left == right),
            "!=": lambda: int(left != right),
            "&&": lambda: int(bool(left) and bool(right)),
            "||": lambda: int(bool(left) or bool(right)),
        }
        if operator not in table:
            return None, f"the operator `{operator}`", via
        result = table[operator]()
        return (result, "", via) if result is not None else (None, f"`{operator}` out of range", via)
