"""The branches around a statement read as argument tests (`if model_args.tune_mm_mlp_adapter:`, `if not
args.use_qlora:`, `if args.use_lora and args.use_qlora:`, `if training_args.bits in [4, 8]:`), or kept as unread
when the test is anything else. Whether a branch holds is for the resolution to tell, from the launcher's
flags and the arguments' defaults."""

from __future__ import annotations

from dataclasses import replace
from typing import List, Optional, Tuple

import libcst as cst

from trainlint.core import Setting, SourceKind, Value
from trainlint.readers.facts import Gate, Keyword
from trainlint.readers.python.context import Branch
from trainlint.readers.python.expressions import NOT_LITERAL, CstExpr, literal_value
from trainlint.readers.python.values import ValueReader


class GateReader:
    """Reads the `if` tests around the statements of one file."""

    def __init__(self, values: ValueReader):
        self.values = values
        self.ctx = values.ctx

    def around(self, node: cst.CSTNode) -> Tuple[Gate, ...]:
        """The branches around `node` within its function, innermost first: it runs when every one holds."""
        return tuple(self.branch(branch) for branch in self.ctx.conditions(node))

    def branch(self, branch: Branch) -> Gate:
        if branch.test is None:
            return Gate((), False, "an exception being raised")
        text = self.ctx.short(branch.test)
        read = self._terms(branch.test)
        if read is None:
            return Gate((), False, text if branch.in_body else f"not ({text})")
        tests, any_of = read
        if branch.in_body:
            return Gate(tests, any_of, text)
        # `not (a or b)` holds when all of `not a`, `not b` do; `not (a and b)` when any does.
        return Gate(tuple(negate(test) for test in tests), not any_of, f"not ({text})")

    def when_false(self, switch: CstExpr) -> Gate:
        """The gate `not value`: a statement that acts when the value it is given is false."""
        text = self.ctx.short(switch)
        term = self._term(switch)
        return Gate((negate(term),) if term is not None else (), True, f"not ({text})")

    def _terms(self, test: CstExpr) -> Optional[Tuple[Tuple[Keyword, ...], bool]]:
        """A test as argument tests joined by one operator: (tests, joined by `or`), else None."""
        if isinstance(test, cst.BooleanOperation):
            parts: List[Keyword] = []
            any_of = isinstance(test.operator, cst.Or)
            for side in (test.left, test.right):
                read = self._terms(side)
                # A side joined by the other operator (`a and (b or c)`, `a and x in [4, 8]`) is no flat list of tests.
                if read is None or len(read[0]) > 1 and read[1] is not any_of:
                    return None
                parts.extend(read[0])
            return tuple(parts), any_of
        membership = self._membership(test)
        if membership is not None:
            return membership
        term = self._term(test)
        return ((term,), True) if term is not None else None

    def _membership(self, test: CstExpr) -> Optional[Tuple[Tuple[Keyword, ...], bool]]:
        """`args.bits in [4, 8]` as the tests `args.bits == 4 or args.bits == 8`; `not in (...)` as all of `!=`.
        None for any other test, and for a collection that is not all constants."""
        if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
                and isinstance(test.comparisons[0].operator, (cst.In, cst.NotIn))
                and isinstance(test.comparisons[0].comparator, (cst.List, cst.Tuple, cst.Set))):
            return None
        elements = test.comparisons[0].comparator.elements
        members = [literal_value(element.value) if isinstance(element, cst.Element) else NOT_LITERAL
                   for element in elements]
        if not members or not all(isinstance(member, (str, int, float)) for member in members):
            return None
        reference = self.values.argument_reference(test.left)
        if reference is None:
            return None
        negated = isinstance(test.comparisons[0].operator, cst.NotIn)
        origin, text = self.ctx.origin(test.left), self.ctx.text(test.left)
        tests = tuple(Keyword(reference, Setting(member, SourceKind.CODE_KEYWORD, origin, text), reference, negated,
                              exact=True) for member in members)
        return tests, not negated

    def _term(self, test: CstExpr) -> Optional[Keyword]:
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            inner = self._term(test.expression)
            return negate(inner) if inner is not None else None
        negated, exact = False, False
        tested: Value = True  # a truth test
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 \
                and isinstance(test.comparisons[0].operator, (cst.Is, cst.IsNot)) \
                and literal_value(test.comparisons[0].comparator) is None:
            # `args.lora_r is not None`: a test of whether the argument is set (None as the tested value), negated
            # for `is None`. `--lora_r 0` sets it.
            negated, tested = isinstance(test.comparisons[0].operator, cst.Is), None
            test = test.left
        elif isinstance(test, cst.Comparison) and len(test.comparisons) == 1 \
                and isinstance(test.comparisons[0].operator, (cst.Equal, cst.NotEqual)) \
                and isinstance(literal_value(test.comparisons[0].comparator), (str, int, float)):
            # `args.adapter_name == "lora"`: equal to a constant, negated for `!=`.
            negated, exact = isinstance(test.comparisons[0].operator, cst.NotEqual), True
            tested = literal_value(test.comparisons[0].comparator)
            test = test.left
        reference = self.values.argument_reference(test)
        # `if qlora:` in a helper the entry calls with `qlora=training_args.qlora`: the call tells it (entry.py).
        parameter = self.values.function_parameter(test) if reference is None else None
        if reference is None and parameter is None:
            return None
        ctx = self.ctx
        setting = Setting(tested, SourceKind.CODE_KEYWORD, ctx.origin(test), ctx.text(test))
        return Keyword(reference or parameter[1], setting, reference, negated, exact=exact, parameter=parameter)


def negate(term: Keyword) -> Keyword:
    return replace(term, negated=not term.negated)
