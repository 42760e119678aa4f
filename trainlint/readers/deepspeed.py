"""JSON configs (DeepSpeed, HF config.json) flattened to dotted key paths with exact origins.

tree-sitter-json is used instead of the `json` module because every value needs the byte span
of its token, and because one `//` comment or trailing comma must not hide every setting of the
file. DeepSpeed and HF/accelerate load these files with a strict `json.load`, which rejects both,
so they are read as written and reported once per file as "non-standard-json".
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple, Union

from trainlint.core import Diagnostic, DiagnosticKind, Origin, Setting, SourceKind, Value
from trainlint.formats import json as json_format
from trainlint.readers.facts import ConfigFile
from trainlint.readers.source import SourceText, node_origin, read_config_file

FORMAT = "json"
# Nesting deeper than this is not a training config; stopping keeps recursion bounded.
MAX_DEPTH = 100
MAX_SYNTAX_ERRORS = 20

_JSON_INT = re.compile(r"-?(?:0|[1-9][0-9]*)")
_JSON_FLOAT = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_SCALAR_TYPES = frozenset({"string", "number", "true", "false", "null"})
_CLOSERS = frozenset({"]", "}"})
# tree-sitter-json 0.24 rejects a `+` in an exponent (`1e+5`, fixed upstream in tree-sitter-json#64):
# it ends the number before the `e` and wraps `e+5` in an ERROR. Such a tail is glued back on.
_PLUS_EXPONENT = re.compile(rb"[eE]\+[0-9]+")


def read_json_config(path: Union[str, Path]) -> ConfigFile:
    """Every scalar of a JSON object file by dotted key path. Never raises: problems with the
    file or its syntax become diagnostics and whatever parsed is kept."""
    return read_config_file(path, FORMAT, _read_json_source)


def _read_json_source(source: SourceText) -> ConfigFile:
    tree = json_format.parse(source.data)
    collector = _Collector(source)
    collector.diagnostics.extend(_syntax_errors(source, tree.root_node))
    collector.diagnostics.extend(_non_standard_json(source, tree.root_node))
    top = _top_level_object(source, tree.root_node, collector)
    if top is not None:
        collector.flatten_object(top, "", depth=0)
    return ConfigFile(
        path=source.path,
        format=FORMAT,
        values=dict(collector.values),
        key_origins=dict(collector.key_origins),
        diagnostics=tuple(collector.diagnostics),
    )


# ---------------------------------------------------------------- syntax errors
def _syntax_errors(source: SourceText, root) -> List[Diagnostic]:
    """One diagnostic per outermost ERROR / MISSING node that is not a tolerated trailing comma."""
    found: List[Diagnostic] = []
    for node in _error_nodes(root):
        if _is_tolerated(node):
            continue
        if len(found) == MAX_SYNTAX_ERRORS:
            found.append(Diagnostic("syntax-error", f"more than {MAX_SYNTAX_ERRORS} syntax errors; "
                                    "the rest are not listed", source.path))
            break
        found.append(Diagnostic("syntax-error", _describe_error(source, node), source.path,
                                node_origin(source, node)))
    return found


def _non_standard_json(source: SourceText, root) -> List[Diagnostic]:
    comments: List[object] = []
    trailing_commas: List[object] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "comment":
            comments.append(node)
        elif (node.type == "ERROR" or node.is_missing) and _is_tolerated(node) and not _is_exponent_tail(node):
            trailing_commas.append(node)
        stack.extend(node.children)
    if not comments and not trailing_commas:
        return []
    first = min(comments + trailing_commas, key=lambda node: node.start_byte)
    parts = [f"{len(found)} {name}" + ("s" if len(found) > 1 else "")
             for found, name in ((comments, "comment"), (trailing_commas, "trailing comma")) if found]
    return [Diagnostic(
        "non-standard-json",
        f"{source.path} has {' and '.join(parts)}; a strict JSON loader such as the one DeepSpeed and "
        "transformers use rejects the file", source.path, node_origin(source, first))]


def _error_nodes(root) -> Iterator:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            yield node
            continue  # errors nested in an error add nothing for the reader of the message
        stack.extend(reversed(node.children))


def _is_tolerated(node) -> bool:
    if node.type == "ERROR" and _is_exponent_tail(node):
        return True
    if node.type == "ERROR":
        kinds = {child.type for child in node.children}
        return "," in kinds and kinds <= {",", "comment"}
    # `[1, 2,]`: tree-sitter inserts a MISSING value between the last comma and the bracket.
    before, after = _neighbours(node)
    return node.start_byte == node.end_byte and before == "," and after in _CLOSERS


def _is_exponent_tail(error) -> bool:
    before = error.prev_sibling
    if before is not None and before.type == "pair":
        before = before.child_by_field_name("value")
    return (before is not None and before.type == "number" and before.end_byte == error.start_byte
            and _PLUS_EXPONENT.fullmatch(error.text or b"") is not None)


def _number_end(number) -> int:
    """End of a number token, including an exponent tail tree-sitter split off."""
    after = number.next_sibling
    if after is None and number.parent is not None and number.parent.type == "pair":
        after = number.parent.next_sibling
    if after is not None and after.type == "ERROR" and _is_exponent_tail(after):
        return after.end_byte
    return number.end_byte


def _neighbours(node) -> Tuple[Optional[str], Optional[str]]:
    parent = node.parent
    if parent is None:
        return None, None
    siblings = [child for child in parent.children if child.type != "comment"]
    for index, sibling in enumerate(siblings):
        if sibling == node:
            before = siblings[index - 1].type if index > 0 else None
            after = siblings[index + 1].type if index + 1 < len(siblings) else None
            return before, after
    return None, None


def _describe_error(source: SourceText, node) -> str:
    origin = node_origin(source, node)
    where = f"JSON syntax error at line {origin.line}, column {origin.column}"
    if node.is_missing:
        expected = f"'{node.type}'" if node.type in _CLOSERS or node.type in {",", ":"} else "a value"
        return f"{where}: expected {expected}"
    kinds = {child.type for child in node.children} - {"comment", ","}
    if kinds and kinds <= {"pair"} | _SCALAR_TYPES | {"object", "array"}:
        # tree-sitter wraps a complete entry in ERROR when the comma after it is missing.
        return f"{where}: missing ',' after this entry"
    snippet = source.data[node.start_byte:node.end_byte].decode("utf-8", errors="replace")
    snippet = snippet if len(snippet) <= 40 else snippet[:37] + "..."
    return f"{where}: unexpected {snippet!r}"


def _top_level_object(source: SourceText, root, collector: "_Collector"):
    """The object to read, or None with a diagnostic. A file cut short inside its top-level
    object is not recovered: tree-sitter flattens what it saw, so key paths would be wrong."""
    values = [child for child in root.named_children
              if child.type not in {"comment", "ERROR"} and not child.is_missing]
    if values and values[0].type == "object":
        if len(values) > 1:
            collector.diagnostics.append(Diagnostic(
                "syntax-error", "more than one JSON value at the top level; only the first object is read",
                source.path, node_origin(source, values[1])))
        return values[0]
    if not any(d.kind == "syntax-error" for d in collector.diagnostics):
        if not values:
            message = f"{source.path} holds no JSON value (empty file)"
            origin = None
        else:
            message = f"the top level of {source.path} is a JSON {values[0].type}, not an object"
            origin = node_origin(source, values[0])
        collector.diagnostics.append(Diagnostic("syntax-error", message, source.path, origin))
    return None


# ---------------------------------------------------------------- flattening
@dataclass
class _Collector:
    """Mutable only while one file is read; the result is frozen into a ConfigFile."""

    source: SourceText
    values: Dict[str, Setting] = field(default_factory=dict)
    key_origins: Dict[str, Origin] = field(default_factory=dict)
    diagnostics: List[Diagnostic] = field(default_factory=list)

    def flatten_object(self, node, prefix: str, depth: int) -> None:
        if self._too_deep(node, depth):
            return
        chosen: Dict[str, Tuple[object, object]] = {}
        for key_node, value_node in _pairs(node):
            key = _string_value(self.source, key_node)
            if key in chosen:
                self._report_duplicate(key_node, _join(prefix, key))
                del chosen[key]  # re-insert so the order follows the winning occurrence
            chosen[key] = (key_node, value_node)
        for key, (key_node, value_node) in chosen.items():
            path = _join(prefix, key)
            self.key_origins[path] = node_origin(self.source, key_node)
            if value_node is not None:
                self.flatten_value(value_node, path, depth + 1)

    def flatten_array(self, node, prefix: str, depth: int) -> None:
        if self._too_deep(node, depth):
            return
        items = [child for child in node.named_children
                 if child.type not in {"comment", "ERROR"} and not child.is_missing]
        for index, item in enumerate(items):
            self.flatten_value(item, _join(prefix, str(index)), depth + 1)

    def flatten_value(self, node, path: str, depth: int) -> None:
        if node.type == "object":
            self.flatten_object(node, path, depth)
        elif node.type == "array":
            self.flatten_array(node, path, depth)
        elif node.type in _SCALAR_TYPES and not node.is_missing:
            end = _number_end(node) if node.type == "number" else node.end_byte
            text = self.source.data[node.start_byte:end].decode("utf-8", errors="replace")
            value = _number_value(text) if node.type == "number" else _scalar_value(self.source, node)
            self.values[path] = Setting(value, SourceKind.CONFIG_FILE, self.source.origin(node.start_byte, end),
                                        text, note=path, written_as=path)

    def _report_duplicate(self, key_node, path: str) -> None:
        origin = node_origin(self.source, key_node)
        self.diagnostics.append(Diagnostic(
            "duplicate-key", f"key {path!r} is written more than once; the last one, at line {origin.line}, wins "
            "(DeepSpeed itself refuses such a file when it is given the path)", self.source.path, origin))

    def _too_deep(self, node, depth: int) -> bool:
        if depth <= MAX_DEPTH:
            return False
        self.diagnostics.append(Diagnostic(
            DiagnosticKind.UNREADABLE_FILE,
            f"{self.source.path} was not read to the end: nesting deeper than {MAX_DEPTH} levels is not read",
            self.source.path, node_origin(self.source, node)))
        return True


def _pairs(node) -> Iterator[Tuple[object, Optional[object]]]:
    """(key, value) nodes of an object, including pairs tree-sitter wrapped in an ERROR node
    (`{"a": 1 "b": 2}`), so that one missing comma does not lose the surrounding settings."""
    for child in node.named_children:
        if child.type == "pair":
            key = child.child_by_field_name("key")
            value = child.child_by_field_name("value")
            if key is not None and key.type == "string" and not key.is_missing:
                yield key, value
        elif child.type == "ERROR":
            yield from _pairs(child)


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


def _string_value(source: SourceText, node) -> str:
    raw = source.data[node.start_byte:node.end_byte].decode("utf-8", errors="replace")
    try:
        decoded = json.loads(raw, strict=False)
    except ValueError:
        # An invalid escape: the characters between the quotes are the best reading.
        return raw[1:-1] if len(raw) >= 2 and raw.endswith('"') else raw.lstrip('"')
    return decoded if isinstance(decoded, str) else raw


def _scalar_value(source: SourceText, node) -> Value:
    """The value of a string, true, false or null node."""
    if node.type == "string":
        return _string_value(source, node)
    if node.type == "true":
        return True
    if node.type == "false":
        return False
    return None


def _number_value(text: str) -> Value:
    if _JSON_INT.fullmatch(text):
        return int(text)
    if _JSON_FLOAT.fullmatch(text):
        return float(text)
    return text  # not a JSON number (a grammar quirk): keep what is written
