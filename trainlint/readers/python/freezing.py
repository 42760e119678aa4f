"""Statements that freeze parameters in code: `param.requires_grad = False`, `module.requires_grad_(False)`,
`module.requires_grad_(requires_grad=False)`. Each is recorded with what it freezes as written (the receiver or,
for a loop variable, the loop's iterable: `model.named_parameters()`) and the branches around it, each read as
argument tests the way a gated override's are (`if model_args.tune_mm_mlp_adapter:`, `if not args.tune_llm:`), or
kept as unread when its test is anything else (`if not any(layer in name for layer in trainable_layers):`).
Whether the freezing runs, and whether a knob trainlint models explains it, is for the resolution to tell."""

from __future__ import annotations

from typing import List

import libcst as cst

from trainlint.readers.facts import Freeze
from trainlint.readers.python.expressions import CstExpr, keyword_args, last_name, literal_value
from trainlint.readers.python.findings import Findings
from trainlint.readers.python.gates import GateReader
from trainlint.readers.python.values import ValueReader, parameter_names

FREEZE_METHOD = "requires_grad_"
FREEZE_ATTRIBUTE = "requires_grad"


class FreezeReader:
    """Appends the freezing statements of a file to its findings."""

    def __init__(self, values: ValueReader, findings: Findings):
        self.values = values
        self.ctx = values.ctx
        self.findings = findings
        self.gates = GateReader(values)

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
        gates = self.gates.around(node)
        if not (literal is False or literal == 0 or literal is None):
            # `requires_grad_(training_args.tune_vision)`: freezes when the value is false.
            gates = (self.gates.when_false(switch), *gates)
        target = self._target(node, receiver)
        self.findings.freezes.append(Freeze(ctx.origin(node), ctx.short(node), ctx.short(target), gates,
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
        names = parameter_names(scope.params)
        return scope.name.value if isinstance(root, cst.Name) and root.value in names else ""


def is_freeze_call(node: cst.Call) -> bool:
    return isinstance(node.func, cst.Attribute) and last_name(node.func) == FREEZE_METHOD


def _bound(target: cst.BaseExpression) -> List[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [name for element in target.elements for name in _bound(element.value)]
    return []

