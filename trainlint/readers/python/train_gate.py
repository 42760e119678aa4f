"""Whether a script trains only when asked to: every `trainer.train(...)` call sits in the body of an
`if <args>.do_train:` (HF's example scripts, ChatGLM's ptuning `main.py`, LLaMA-Factory's workflows).
`do_train` is not read by the Trainer itself; it is the scripts' own switch, so a launch that leaves it
off (`--do_predict` alone) evaluates or predicts and never takes a training step."""
from __future__ import annotations

import ast
from typing import List, Optional, Tuple

from trainlint.readers.facts import DO_TRAIN


def train_gate(tree: Optional[ast.Module]) -> Optional[str]:
    """DO_TRAIN when the module calls a trainer's `train()` and every such call is gated by a test of
    `<something>.do_train` (alone, or in an `and`); None otherwise, or when there is no such call."""
    if tree is None:
        return None
    gated_calls: List[bool] = []
    # An explicit stack: deeply nested code must not exhaust the interpreter's recursion limit.
    stack: List[Tuple[ast.AST, bool]] = [(tree, False)]
    while stack:
        node, gated = stack.pop()
        if isinstance(node, ast.If):
            stack.append((node.test, gated))
            inner = gated or _tests_do_train(node.test)
            stack.extend((statement, inner) for statement in node.body)
            stack.extend((statement, gated) for statement in node.orelse)
            continue
        if _is_trainer_train_call(node):
            gated_calls.append(gated)
        stack.extend((child, gated) for child in ast.iter_child_nodes(node))
    return DO_TRAIN if gated_calls and all(gated_calls) else None


def _tests_do_train(test: ast.expr) -> bool:
    if isinstance(test, ast.Attribute):
        return test.attr == DO_TRAIN
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_tests_do_train(value) for value in test.values)
    return False


def _is_trainer_train_call(node: ast.AST) -> bool:
    """`trainer.train(...)`, `self.trainer.train(...)`: not `model.train()`, which only sets a mode."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute) or node.func.attr != "train":
        return False
    receiver = node.func.value
    name = receiver.id if isinstance(receiver, ast.Name) else receiver.attr if isinstance(receiver, ast.Attribute) \
        else ""
    return "trainer" in name.lower()
