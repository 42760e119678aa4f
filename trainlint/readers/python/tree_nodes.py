"""The nodes of a module's stdlib tree that the whole-module questions look through, gathered by kind in one walk.

Whether the module calls `.backward()`, which functions it hands its parser to, what its Trainer classes are,
whether it trains only `if ...do_train:` and whether it reads what parse_known_args leaves over: each asks about
a few kinds of node anywhere in the tree. Walking the whole tree once for all of them, instead of once each, is
most of what answering them costs on a large entry script."""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Iterable, List, Optional, Tuple, Union

Assignment = Union[ast.Assign, ast.AnnAssign]
# Leaf nodes no question asks about (`Load`, `Add`, `And`, `Eq`...): read as attributes where needed, never walked to.
_OPERATORS = (ast.expr_context, ast.boolop, ast.operator, ast.unaryop, ast.cmpop)


@dataclass(frozen=True)
class TreeNodes:
    """Nodes of one tree by kind, each in the order `ast.walk` meets them (breadth first)."""

    calls: Tuple[ast.Call, ...] = ()
    classes: Tuple[ast.ClassDef, ...] = ()
    ifs: Tuple[ast.If, ...] = ()
    assignments: Tuple[Assignment, ...] = ()
    loaded_names: Tuple[ast.Name, ...] = ()


def tree_nodes(tree: Optional[ast.AST]) -> Optional[TreeNodes]:
    """The nodes of `tree` by kind; None for no tree (text the stdlib parser was not run on)."""
    if tree is None:
        return None
    calls: List[ast.Call] = []
    classes: List[ast.ClassDef] = []
    ifs: List[ast.If] = []
    assignments: List[Assignment] = []
    names: List[ast.Name] = []
    for node in breadth_first(tree):
        kind = type(node)
        if kind is ast.Call:
            calls.append(node)  # type: ignore[arg-type]
        elif kind is ast.Name:
            if type(node.ctx) is ast.Load:  # type: ignore[attr-defined]
                names.append(node)  # type: ignore[arg-type]
        elif kind is ast.Assign or kind is ast.AnnAssign:
            assignments.append(node)  # type: ignore[arg-type]
        elif kind is ast.If:
            ifs.append(node)  # type: ignore[arg-type]
        elif kind is ast.ClassDef:
            classes.append(node)  # type: ignore[arg-type]
    return TreeNodes(tuple(calls), tuple(classes), tuple(ifs), tuple(assignments), tuple(names))


def breadth_first(root: ast.AST) -> List[ast.AST]:
    """The nodes of `root` (itself first) in the order `ast.walk` yields them, breadth first, operators and expression
    contexts left out. A list built in one loop: `ast.walk`'s generators per node cost more than the parse."""
    found = [root]
    for node in found:  # grows as it is read: each node's children join the end
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, list):
                found.extend(item for item in value if isinstance(item, ast.AST) and not isinstance(item, _OPERATORS))
            elif isinstance(value, ast.AST) and not isinstance(value, _OPERATORS):
                found.append(value)
    return found


def breadth_first_all(roots: Iterable[ast.AST]) -> List[ast.AST]:
    """`breadth_first` of each root in turn."""
    return [node for root in roots for node in breadth_first(root)]


def last_name(node: ast.AST) -> Optional[str]:
    """The name a callee, base or receiver ends in: `ArgumentParser` of `argparse.ArgumentParser`, `trainer` of
    `self.trainer`; None for any other expression."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def contains(outer: ast.AST, inner: ast.AST) -> bool:
    """Whether `inner`'s code lies within `outer`'s: the stdlib's positions nest as its nodes do."""
    return (outer.lineno, outer.col_offset) <= (inner.lineno, inner.col_offset) and (  # type: ignore[attr-defined]
        (inner.end_lineno or inner.lineno, inner.end_col_offset or 0)  # type: ignore[attr-defined]
        <= (outer.end_lineno or outer.lineno, outer.end_col_offset or 0))  # type: ignore[attr-defined]
