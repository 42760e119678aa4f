"""The classes a Python module defines, each with its bases as written: all a question of class headers needs
(is a Trainer class HF's, or a loop of the repository's own?). The standard library's parser alone reads them; the
libcst pass that settings need is not run."""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, Tuple, Union

from trainlint.core import Diagnostic
from trainlint.readers.python.prefilter import stdlib_tree
from trainlint.readers.python.screening import STDLIB_PARSER_GUARDS_DEPTH, too_deep_to_parse
from trainlint.readers.python.tree_nodes import breadth_first
from trainlint.readers.source import read_source

ClassBases = Dict[str, Tuple[str, ...]]


def read_class_bases(path: Union[str, Path]) -> ClassBases:
    """Each class the module defines (at any depth; the first of a name wins) with its bases as written; empty when
    the file cannot be read or parsed. Never raises."""
    source = read_source(path)
    if isinstance(source, Diagnostic) or "class " not in source.text:
        return {}
    text = source.text.lstrip("\ufeff")
    # Before Python 3.11 the stdlib parser can overflow the C stack on pathological nesting: screened out first.
    if not STDLIB_PARSER_GUARDS_DEPTH and too_deep_to_parse(text) is not None:
        return {}
    found: ClassBases = {}
    try:
        tree = stdlib_tree(text)
        for node in breadth_first(tree) if tree is not None else ():
            if isinstance(node, ast.ClassDef):
                found.setdefault(node.name, tuple(ast.unparse(base) for base in node.bases))
    except (RecursionError, MemoryError):
        return {}
    return found
