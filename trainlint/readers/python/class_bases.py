"""The classes a Python module defines, each with its bases as written, and the argument values under which a copied
training loop of one takes a forward-only step: all a question of a Trainer class needs (is it HF's, or a loop of the
repository's own? does it backpropagate?). The standard library's parser alone reads them; the libcst pass that
settings need is not run."""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Union

from trainlint.core import Diagnostic
from trainlint.readers.facts import ClassBases, ClassHeaders
from trainlint.readers.python.prefilter import stdlib_tree
from trainlint.readers.python.screening import STDLIB_PARSER_GUARDS_DEPTH, too_deep_to_parse
from trainlint.readers.python.step_gates import COPIED_LOOP, forward_only_steps
from trainlint.readers.python.tree_nodes import breadth_first
from trainlint.readers.source import read_source


def read_class_headers(path: Union[str, Path]) -> ClassHeaders:
    """Each class the module defines (at any depth; the first of a name wins) with its bases as written, and the
    module's forward-only step gates (`trainlint.readers.python.step_gates`); empty when the file cannot be read or
    parsed. Never raises."""
    source = read_source(path)
    if isinstance(source, Diagnostic) or "class " not in source.text:
        return ClassHeaders()
    text = source.text.lstrip("\ufeff")
    # Before Python 3.11 the stdlib parser can overflow the C stack on pathological nesting: screened out first.
    if not STDLIB_PARSER_GUARDS_DEPTH and too_deep_to_parse(text) is not None:
        return ClassHeaders()
    found: ClassBases = {}
    try:
        tree = stdlib_tree(text)
        classes = [node for node in breadth_first(tree) if isinstance(node, ast.ClassDef)] if tree is not None else []
        for node in classes:
            found.setdefault(node.name, tuple(ast.unparse(base) for base in node.bases))
        gates = forward_only_steps(classes) if COPIED_LOOP in text else ()
    except (RecursionError, MemoryError):
        return ClassHeaders()
    return ClassHeaders(found, gates)
