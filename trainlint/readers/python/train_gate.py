"""Whether a script trains only when asked to: every `trainer.train(...)` call sits in the body of an
`if <args>.do_train:` (HF's example scripts, ChatGLM's ptuning `main.py`, LLaMA-Factory's workflows).
`do_train` is not read by the Trainer itself; it is the scripts' own switch, so a launch that leaves it
off (`--do_predict` alone) evaluates or predicts and never takes a training step."""
from __future__ import annotations

import ast
from typing import Optional

from trainlint.readers.facts import DO_TRAIN
from trainlint.readers.python.tree_nodes import TreeNodes, contains, last_name


def train_gate(nodes: Optional[TreeNodes]) -> Optional[str]:
    """DO_TRAIN when the module calls a trainer's `train()` and every such call is gated by a test of
    `<something>.do_train` (alone, or in an `and`); None otherwise, or when there is no such call. `nodes`: the
    module's stdlib tree by kind. A call is gated when it lies within a statement of such an `if`'s body (not
    its test, not its `else`)."""
    if nodes is None:
        return None
    calls = [call for call in nodes.calls if _is_trainer_train_call(call)]
    gated_bodies = [statement for branch in nodes.ifs if _tests_do_train(branch.test) for statement in branch.body]
    if not calls:
        return None
    return DO_TRAIN if all(any(contains(statement, call) for statement in gated_bodies) for call in calls) else None


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
    return "trainer" in (last_name(node.func.value) or "").lower()
