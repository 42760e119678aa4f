"""The classes a Python module defines, each with its bases as written, and those that replace HF Trainer's training
loop: all a question of class outlines needs (is a Trainer class HF's, or a loop of the repository's own?). The
standard library's parser alone reads them; the libcst pass that settings need is not run."""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Iterable, Union

from trainlint.core import Diagnostic
from trainlint.readers.facts import ClassBases, ClassOutline
from trainlint.readers.python.prefilter import stdlib_tree
from trainlint.readers.python.screening import STDLIB_PARSER_GUARDS_DEPTH, too_deep_to_parse
from trainlint.readers.python.tree_nodes import breadth_first
from trainlint.readers.source import read_source

# HF Trainer's method that runs the whole training loop (every step's forward, backward and optimizer update): a class
# defining its own runs a loop of its own (MeZO's forward-only steps), whatever it derives from.
TRAINING_LOOP_METHOD = "_inner_training_loop"


def read_class_outline(path: Union[str, Path]) -> ClassOutline:
    """Each class the module defines (at any depth; the first of a name wins) with its bases as written; empty when
    the file cannot be read or parsed. Never raises."""
    source = read_source(path)
    if isinstance(source, Diagnostic) or "class " not in source.text:
        return ClassOutline()
    text = source.text.lstrip("\ufeff")
    # Before Python 3.11 the stdlib parser can overflow the C stack on pathological nesting: screened out first.
    if not STDLIB_PARSER_GUARDS_DEPTH and too_deep_to_parse(text) is not None:
        return ClassOutline()
    try:
        tree = stdlib_tree(text)
        return outline_of(node for node in breadth_first(tree) if isinstance(node, ast.ClassDef)) \
            if tree is not None else ClassOutline()
    except (RecursionError, MemoryError):
        return ClassOutline()


def outline_of(classes: Iterable[ast.ClassDef]) -> ClassOutline:
    bases: ClassBases = {}
    own_loops = set()
    for node in classes:
        if node.name in bases:
            continue
        bases[node.name] = tuple(ast.unparse(base) for base in node.bases)
        if any(isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == TRAINING_LOOP_METHOD
               for item in node.body):
            own_loops.add(node.name)
    return ClassOutline(bases, frozenset(own_loops))
