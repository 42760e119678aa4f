"""Does a file still parse after its edits? Counted with the parser of its format, in memory, so a
broken result is caught before anything is written."""
from __future__ import annotations

import io
from typing import Optional

from trainlint.fixers.render import JSON, PYTHON, SHELL, YAML, file_kind


def _tree_errors(language, data: bytes) -> int:
    import tree_sitter

    tree = tree_sitter.Parser(tree_sitter.Language(language)).parse(data)
    count = 0
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            count += 1
        elif node.has_error:
            stack.extend(node.children)
    return count


def _python_errors(data: bytes) -> int:
    import libcst as cst

    try:
        cst.parse_module(data)
    except (cst.ParserSyntaxError, UnicodeDecodeError, ValueError):
        return 1
    return 0


def _yaml_errors(data: bytes) -> int:
    from ruamel.yaml import YAML as RuamelYaml
    from ruamel.yaml.error import YAMLError

    try:
        list(RuamelYaml(typ="rt").load_all(io.StringIO(data.decode("utf-8"))))
    except (YAMLError, UnicodeDecodeError, ValueError):
        return 1
    return 0


def syntax_errors(path: str, data: bytes) -> int:
    """How many syntax errors the file's parser reports (0 for a clean file)."""
    kind = file_kind(path)
    if kind == PYTHON:
        return _python_errors(data)
    if kind == YAML:
        return _yaml_errors(data)
    if kind == JSON:
        import tree_sitter_json

        return _tree_errors(tree_sitter_json.language(), data)
    import tree_sitter_bash

    return _tree_errors(tree_sitter_bash.language(), data)


def broken_by_edits(path: str, before: bytes, after: bytes) -> Optional[str]:
    """Why the edited file no longer parses, or None when it parses at least as well as before."""
    try:
        old, new = syntax_errors(path, before), syntax_errors(path, after)
    except Exception as error:  # a parser crash must not become a silent write
        return f"{path} could not be re-parsed ({type(error).__name__}: {error})"
    if new > old:
        return f"{path} would no longer parse ({kind_name(path)}: {new} syntax error(s), {old} before)"
    return None


def kind_name(path: str) -> str:
    return {SHELL: "shell", PYTHON: "Python", JSON: "JSON", YAML: "YAML"}[file_kind(path)]
