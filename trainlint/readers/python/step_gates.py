"""A Trainer subclass whose copied training loop picks its step by an argument: MeZO's `_inner_training_loop`
runs `tr_loss_step = self.zo_step(model, inputs)` under `if args.trainer == "zo":` and HF's `self.training_step(...)`
otherwise. When the step it picks is a method of the class that takes no backward pass (no `.backward(` in it or in
the methods of the class it calls), a launch that sets the argument to that value trains by forward passes alone:
the memory model, which judges a backward pass, does not apply to it."""
from __future__ import annotations

import ast
from typing import Dict, Iterable, List, Optional, Set, Tuple

from trainlint.readers.facts import StepGate
from trainlint.readers.python.tree_nodes import breadth_first, breadth_first_all

# The method of HF's Trainer that a copied loop calls for a step that backpropagates.
_HF_STEP = "training_step"
COPIED_LOOP = "_inner_training_loop"
Methods = Dict[str, ast.AST]


def forward_only_steps(classes: Iterable[ast.ClassDef]) -> Tuple[StepGate, ...]:
    """The argument values under which a class's copied training loop takes a step without a backward pass."""
    found: List[StepGate] = []
    for cls in classes:
        methods: Methods = {node.name: node for node in cls.body
                            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
        loop = methods.get(COPIED_LOOP)
        if loop is None:
            continue
        for branch in breadth_first(loop):
            if not isinstance(branch, ast.If):
                continue
            gate = _argument_equals(branch.test)
            steps = _own_calls(branch.body, methods) - {_HF_STEP}
            if gate is None or not steps or _HF_STEP not in _own_calls(branch.orelse, methods, hf=True):
                continue
            if not any(_backpropagates(methods[step], methods) for step in steps):
                found.append(StepGate(cls.name, gate[0], gate[1], min(steps), branch.lineno))
    return tuple(found)


def _argument_equals(test: ast.expr) -> Optional[Tuple[str, str]]:
    """(`trainer`, "zo") of `args.trainer == "zo"` or `self.args.trainer == "zo"`: a string argument and a literal."""
    if not isinstance(test, ast.Compare) or len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
        return None
    left, right = test.left, test.comparators[0]
    if isinstance(left, ast.Constant):
        left, right = right, left
    if not isinstance(left, ast.Attribute) or not isinstance(right, ast.Constant) or not isinstance(right.value, str):
        return None
    owner = left.value
    is_args = isinstance(owner, ast.Name) and owner.id == "args" or (
        isinstance(owner, ast.Attribute) and owner.attr == "args" and isinstance(owner.value, ast.Name)
        and owner.value.id == "self")
    return (left.attr, right.value) if is_args else None


def _own_calls(statements: Iterable[ast.stmt], methods: Methods, hf: bool = False) -> Set[str]:
    """The methods of the class called as `self.name(...)` in `statements` (HF's training_step too, with `hf`)."""
    called: Set[str] = set()
    for node in breadth_first_all(statements):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "self" \
                and (node.func.attr in methods or (hf and node.func.attr == _HF_STEP)):
            called.add(node.func.attr)
    return called


def _backpropagates(method: ast.AST, methods: Methods) -> bool:
    """Whether `method`, or a method of the class it calls (transitively), calls `.backward(...)` or HF's
    training_step; an unknown call counts as none (the class's own code is all that is read)."""
    seen: Set[int] = set()
    pending = [method]
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        for node in breadth_first(current):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                if node.func.attr in ("backward", _HF_STEP):
                    return True
                if isinstance(node.func.value, ast.Name) and node.func.value.id == "self" \
                        and node.func.attr in methods:
                    pending.append(methods[node.func.attr])
    return False
