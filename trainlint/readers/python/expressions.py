"""Small questions about one libcst expression: is it a constant, what dotted name does it spell,
is it the main guard, does a branch test read a flag."""

from __future__ import annotations

import ast
from typing import Dict, Optional, Union

import libcst as cst

from trainlint.core import Value

CstExpr = cst.BaseExpression


class NotLiteral:
    """Marker: the expression is not a constant."""


NOT_LITERAL = NotLiteral()


def literal_value(node: CstExpr) -> Union[Value, NotLiteral]:
    """A Python constant (int, float, bool, str, None; signed numbers; arithmetic on numbers)."""
    try:
        return _literal(node)
    except (ArithmeticError, ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return NOT_LITERAL


def _literal(node: CstExpr) -> Union[Value, NotLiteral]:
    if isinstance(node, cst.Integer):
        return _number(node.value, int)
    if isinstance(node, cst.Float):
        return _number(node.value, float)
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        value = _string(node)
        return value if isinstance(value, str) else NOT_LITERAL
    if isinstance(node, cst.Name):
        return {"True": True, "False": False, "None": None}.get(node.value, NOT_LITERAL)
    if isinstance(node, cst.UnaryOperation):
        operand = _literal(node.expression)
        if _is_number(operand) and isinstance(node.operator, cst.Minus):
            return -operand  # type: ignore[operator]
        if _is_number(operand) and isinstance(node.operator, cst.Plus):
            return +operand  # type: ignore[operator]
        return NOT_LITERAL
    if isinstance(node, cst.BinaryOperation):
        return _arithmetic(node)
    return NOT_LITERAL


def _number(written: str, kind: type) -> Union[int, float]:
    """`1_000`, `0x10`, `1e-4`: the number, without compiling the text (`ast.literal_eval` compiles)."""
    try:
        return int(written, 0) if kind is int else float(written)
    except ValueError:  # a spelling the shortcuts do not take (`010` is no Python 3 integer): ask Python
        return ast.literal_eval(written)


def _string(node: cst.BaseString) -> Union[str, bytes, None]:
    """libcst's `evaluated_value`, reading a string without escapes directly (libcst's compiles the text)."""
    if isinstance(node, cst.ConcatenatedString):
        if isinstance(node.left, cst.FormattedString) or isinstance(node.right, cst.FormattedString):
            return None
        left, right = _string(node.left), _string(node.right)
        if right is None or type(left) is not type(right):
            return None
        return left + right  # type: ignore[operator]
    if not isinstance(node, cst.SimpleString):
        return None
    written = node.value
    prefix = len(written) - len(written.lstrip("rRuUbB"))
    if "\\" in written or "\r" in written or "b" in written[:prefix].lower():
        return node.evaluated_value  # escapes, CRLF folded in long strings, bytes: as Python reads them
    quote = 3 if written[prefix : prefix + 3] in ('"""', "'''") and len(written) - prefix >= 6 else 1
    return written[prefix + quote : len(written) - quote]


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _arithmetic(node: cst.BinaryOperation) -> Union[Value, NotLiteral]:
    left, right = _literal(node.left), _literal(node.right)
    operator = node.operator
    if isinstance(left, str) and isinstance(right, str) and isinstance(operator, cst.Add):
        return left + right
    if not (_is_number(left) and _is_number(right)):
        return NOT_LITERAL
    if isinstance(operator, cst.Power):
        # Keep evaluation cheap: constants like 2**10 or 1e-4*2**3, nothing astronomical.
        if abs(right) > 64 or abs(left) > 2**20:  # type: ignore[arg-type]
            return NOT_LITERAL
        return left**right  # type: ignore[operator]
    operations = {
        cst.Add: lambda a, b: a + b,
        cst.Subtract: lambda a, b: a - b,
        cst.Multiply: lambda a, b: a * b,
        cst.Divide: lambda a, b: a / b,
        cst.FloorDivide: lambda a, b: a // b,
        cst.Modulo: lambda a, b: a % b,
    }
    for operator_type, apply in operations.items():
        if isinstance(operator, operator_type):
            return apply(left, right)
    return NOT_LITERAL


def dotted_name(node: cst.BaseExpression) -> Optional[str]:
    """`a.b.c` for a Name/Attribute chain, else None."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = dotted_name(node.value)
        return f"{head}.{node.attr.value}" if head is not None else None
    return None


def last_name(node: cst.BaseExpression) -> Optional[str]:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return None


def keyword_args(call: cst.Call) -> Dict[str, cst.Arg]:
    return {arg.keyword.value: arg for arg in call.args if arg.keyword is not None}


def is_main_guard(test: CstExpr) -> bool:
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    target = test.comparisons[0]
    if not isinstance(target.operator, cst.Equal):
        return False
    sides = [test.left, target.comparator]
    names = [side for side in sides if isinstance(side, cst.Name) and side.value == "__name__"]
    mains = [side for side in sides if literal_value(side) == "__main__"]
    return bool(names) and bool(mains)


def reads_flag(test: CstExpr, flag: str) -> bool:
    """`training_args.flag`, `... and args.flag`, `getattr(args, "flag")`: the test reads `flag`."""
    if isinstance(test, cst.Attribute):
        return test.attr.value == flag
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return reads_flag(test.left, flag) or reads_flag(test.right, flag)
    if isinstance(test, cst.Call) and last_name(test.func) == "getattr" and len(test.args) >= 2:
        return literal_value(test.args[1].value) == flag
    return False
