"""Statements that freeze parameters in code: `param.requires_grad = False`, `module.requires_grad_(False)`,
`module.requires_grad_(requires_grad=False)`. Each is recorded with what it freezes as written (the receiver or,
for a loop variable, the loop's iterable: `model.named_parameters()`) and the branches around it, each read as
argument tests the way a gated override's are (`if model_args.tune_mm_mlp_adapter:`, `if not args.tune_llm:`), or
kept as unread when its test is anything else (`if not any(layer in name for layer in trainable_layers):`).
Whether the freezing runs, and whether a knob trainlint models explains it, is for the resolution to tell."""

from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst

from trainlint.core import Setting, SourceKind
from trainlint.readers.facts import Freeze, Gate, Keyword
from trainlint.readers.python.context import Branch
from trainlint.readers.python.expressions import CstExpr, keyword_args, last_name, literal_value
from trainlint.readers.python.findings import Findings
from trainlint.readers.python.values import ValueReader

FREEZE_METHOD = "requires_grad_"
FREEZE_ATTRIBUTE = "requires_grad"


class FreezeReader:
    """Appends the freezing statements of a file to its findings."""

    def __init__(self, values: ValueReader, findings: Findings):
        self.values = values
        self.ctx = values.ctx
        self.findings = findings

    def call(self, node: cst.Call) -> None:
        """`X.requires_grad_(False)`: freezes unless told True (`requires_grad_()` unfreezes)."""
        if not isinstance(node.func, cst.Attribute):
            return
        positional = [arg for arg in node.args if arg.keyword is None and not arg.star]
        given = keyword_args(node).get("requires_grad")
        argument = positional[0].value if positional else given.value if given is not None else None
        if argument is None:
            return
        self._record(node, node.func.value, argument)

    def assignment(self, target: cst.BaseExpression, value: CstExpr, statement: cst.CSTNode) -> None:
        """`param.requires_grad = False` (or a value that may be False)."""
        if isinstance(target, cst.Attribute) and target.attr.value == FREEZE_ATTRIBUTE:
            self._record(statement, target.value, value)

    def _record(self, node: cst.CSTNode, receiver: CstExpr, switch: CstExpr) -> None:
        ctx = self.ctx
        literal = literal_value(switch)
        if literal is True or (isinstance(literal, (int, float)) and not isinstance(literal, bool) and literal):
            return  # unfreezes
        gates = [self._gate(branch) for branch in ctx.conditions(node)]
        if not (literal is False or literal == 0 or literal is None):
            # `requires_grad_(training_args.tune_vision)`: freezes when the value is false.
            gates.insert(0, self._switch_gate(switch))
        target = self._target(node, receiver)
        self.findings.freezes.append(Freeze(ctx.origin(node), ctx.short(node), ctx.short(target), tuple(gates),
                                            self._helper(node, target)))

    def _target(self, node: cst.CSTNode, receiver: CstExpr) -> CstExpr:
        """The receiver as written or, when it is the variable of an enclosing `for` loop, the loop's iterable."""
        if isinstance(receiver, cst.Name):
            current = self.ctx.parents.get(node)
            while current is not None and not isinstance(current, (cst.FunctionDef, cst.Module)):
                if isinstance(current, cst.For) and receiver.value in _bound(current.target):
                    return current.iter
                current = self.ctx.parents.get(current)
        return receiver

    def _helper(self, node: cst.CSTNode, target: CstExpr) -> str:
        """The name of the function around the statement when what it freezes is one of that function's parameters,
        `self` included (a model's own method freezing its parts: `self.language_model.requires_grad_(False)` in
        TinyLLaVA's loader, which its training recipes follow by unfreezing what they train)."""
        scope = self.ctx.scope_of(node)
        if not isinstance(scope, cst.FunctionDef):
            return ""
        root = target
        while isinstance(root, (cst.Attribute, cst.Call, cst.Subscript)):
            root = root.func if isinstance(root, cst.Call) else root.value
        params = scope.params
        names = {param.name.value for param in (*params.posonly_params, *params.params, *params.kwonly_params)}
        return scope.name.value if isinstance(root, cst.Name) and root.value in names else ""

    # ------------------------------------------------ branch tests
    def _gate(self, branch: Branch) -> Gate:
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
        return Gate(tuple(_negate(test) for test in tests), not any_of, f"not ({text})")

    def _switch_gate(self, switch: CstExpr) -> Gate:
        """The statement freezes when the value it sets is false: the gate is `not value`."""
        text = self.ctx.short(switch)
        term = self._term(switch)
        return Gate((_negate(term),) if term is not None else (), True, f"not ({text})")

    def _terms(self, test: CstExpr) -> Optional[Tuple[Tuple[Keyword, ...], bool]]:
        """A test as argument tests joined by one operator: (tests, joined by `or`), else None."""
        if isinstance(test, cst.BooleanOperation):
            parts: List[Keyword] = []
            for side in (test.left, test.right):
                if isinstance(side, cst.BooleanOperation) and type(side.operator) is not type(test.operator):
                    return None
                read = self._terms(side)
                if read is None:
                    return None
                parts.extend(read[0])
            return tuple(parts), isinstance(test.operator, cst.Or)
        term = self._term(test)
        return ((term,), True) if term is not None else None

    def _term(self, test: CstExpr) -> Optional[Keyword]:
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            inner = self._term(test.expression)
            return _negate(inner) if inner is not None else None
        negated = False
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 \
                and isinstance(test.comparisons[0].operator, (cst.Is, cst.IsNot)) \
                and literal_value(test.comparisons[0].comparator) is None:
            # `args.mm_tunable_parts is None`: read as `not args.mm_tunable_parts`, which a value that is not a
            # switch leaves untold (a default None is told: the test holds).
            negated = isinstance(test.comparisons[0].operator, cst.Is)
            test = test.left
        reference = self.values.argument_reference(test)
        if reference is None:
            return None
        ctx = self.ctx
        setting = Setting(True, SourceKind.CODE_KEYWORD, ctx.origin(test), ctx.text(test))
        return Keyword(reference, setting, reference, negated)


def is_freeze_call(node: cst.Call) -> bool:
    return isinstance(node.func, cst.Attribute) and last_name(node.func) == FREEZE_METHOD


def _bound(target: cst.BaseExpression) -> List[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [name for element in target.elements for name in _bound(element.value)]
    return []


def _negate(term: Keyword) -> Keyword:
    return Keyword(term.name, term.setting, term.reference, not term.negated)
