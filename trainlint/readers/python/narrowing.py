"""The statements inside the functions libcst reads that it need not read either: the model surgery, data
loading and logging around the few statements of an entry point that hold a setting.

The collector walks only the statements the prefilter marks; what else reads a function's statements is
- the scope lookups (`Context.assignments`): every binding of a name read by a kept statement (an
  `eval_dataset=` value, a splatted data module and the entries of the dict it is bound to, the config handed to
  `deepspeed.initialize`), with the branches around it;
- the return statements of a function a trainer's `**` splat calls;
- the calls under the main guard (`main_calls`), and the parse calls that bind the argument namespaces.
A statement that is none of these, holds none of them and binds no name a kept statement reads (transitively:
a kept binding's own names are read too) is handed to libcst as `pass` on its first line and blank lines after,
so every other line keeps its number and text. A statement that does not start and end its lines alone (`a = 1;
b = 2`, the body of `if x: y`, an `elif`) stays as written.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, List, Sequence, Set, Tuple

from trainlint.readers.python.context import PARSE_METHODS

DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
# A line, by number from 1: the first and the last of a statement handed to libcst as `pass`.
Span = Tuple[int, int]


def idle_statement_spans(
    body: Sequence[ast.stmt], marked: FrozenSet[int], whole: FrozenSet[int], lines: Sequence[str]
) -> List[Span]:
    """The lines of the outermost statements, inside the marked statements, that libcst need not read. `whole`:
    ids of top-level statements read as they are (the functions that may build an eval dict)."""
    module = _Scope(marked, lines)
    statements: List[ast.stmt] = []
    spans: List[Span] = []
    for statement in body:
        if isinstance(statement, FUNCTIONS):
            if id(statement) in marked and id(statement) not in whole:
                spans.extend(_Scope(marked, lines).idle_spans(statement.body))
            continue
        statements.append(statement)
        if id(statement) not in marked or isinstance(statement, ast.ClassDef):
            module.fixed.add(id(statement))  # not narrowed: the text stays, only what it reads may matter
        elif isinstance(statement, ast.If) and _mentions_name(statement.test, "__name__"):
            module.guards.add(id(statement))  # every call under the main guard names a function the file runs
    return spans + module.idle_spans(statements)


@dataclass
class _Parts:
    """One statement's own parts (a compound statement's header; a simple statement whole): the names they read
    and bind, whether they alone keep the statement, and the statement's blocks."""

    names: FrozenSet[str]
    bound: FrozenSet[str]
    needed: bool
    blocks: List[Sequence[ast.stmt]] = field(default_factory=list)


class _Scope:
    """The statements of one function (or of the module), nested blocks included: what a name lookup from a
    kept statement of the scope may reach. The functions defined in it are scopes of their own. `fixed`: ids of
    statements kept as written; `guards`: ids of main guards."""

    def __init__(self, marked: FrozenSet[int], lines: Sequence[str]):
        self._marked = marked
        self._lines = lines
        self.fixed: Set[int] = set()
        self.guards: Set[int] = set()
        self._parts: Dict[int, _Parts] = {}
        self._subtrees: Dict[int, _Parts] = {}

    def idle_spans(self, body: Sequence[ast.stmt]) -> List[Span]:
        read: Set[str] = set()
        while True:  # until the names the kept statements read no longer grow
            walk = _Walk(read)
            for statement in body:
                self._statement(statement, walk, id(statement) in self.guards)
            if walk.names <= read:
                break
            read |= walk.names
        spans = walk.spans
        for definition in walk.definitions:
            if isinstance(definition, FUNCTIONS):
                spans.extend(_Scope(self._marked, self._lines).idle_spans(definition.body))
            else:  # a marked class: its fields are read as written, its marked methods narrowed
                for method in definition.body:
                    if isinstance(method, FUNCTIONS) and id(method) in self._marked:
                        spans.extend(_Scope(self._marked, self._lines).idle_spans(method.body))
        return spans

    def _statement(self, statement: ast.stmt, walk: "_Walk", guarded: bool) -> bool:
        """Adds the statement's idle spans to the walk; True when the statement stays."""
        if id(statement) in self.fixed:
            subtree = self._subtree(statement)
            if subtree.needed or id(statement) in self._marked or not subtree.bound.isdisjoint(walk.read):
                walk.names.update(subtree.names)
            if isinstance(statement, ast.ClassDef) and id(statement) in self._marked:
                walk.definitions.append(statement)
            return True
        if isinstance(statement, DEFINITIONS):
            # an idle one is reduced already (prefilter); a marked one stays, its header read, its body narrowed
            if id(statement) in self._marked:
                walk.names.update(_header_names(statement))
                walk.definitions.append(statement)
            return True
        parts = self._parts_of(statement, guarded)
        inner = _Walk(walk.read)
        inner_kept = False
        for block in parts.blocks:
            for child in block:
                inner_kept = self._statement(child, inner, guarded) or inner_kept
        walk.names.update(inner.names)
        walk.definitions.extend(inner.definitions)
        if parts.needed or inner_kept or id(statement) in self._marked or not parts.bound.isdisjoint(walk.read):
            walk.names.update(parts.names)
            walk.spans.extend(inner.spans)
            return True
        span = _whole_lines(statement, self._lines)
        if span is None:  # shares a line with other code: it stays as written, with what it reads
            walk.names.update(self._subtree(statement).names)
            walk.spans.extend(inner.spans)
            return True
        walk.spans.append(span)
        return False

    def _parts_of(self, statement: ast.stmt, guarded: bool) -> _Parts:
        found = self._parts.get(id(statement))
        if found is None:
            own, blocks = statement_parts(statement)
            found = _read(statement, own, guarded)
            found.blocks = blocks
            self._parts[id(statement)] = found
        return found

    def _subtree(self, statement: ast.stmt) -> _Parts:
        found = self._subtrees.get(id(statement))
        if found is None:
            found = _read(statement, [statement], guarded=False)
            found.needed = found.needed or any(isinstance(node, ast.Return) for node in ast.walk(statement))
            self._subtrees[id(statement)] = found
        return found


@dataclass
class _Walk:
    """One pass over a scope: the names the kept statements read, the idle spans, the marked definitions met.
    `read`: the names the kept statements read, as the passes before found them."""

    read: Set[str]
    names: Set[str] = field(default_factory=set)
    spans: List[Span] = field(default_factory=list)
    definitions: List[ast.stmt] = field(default_factory=list)


def _read(statement: ast.stmt, own: Sequence[ast.AST], guarded: bool) -> _Parts:
    names: Set[str] = set()
    bound: Set[str] = set()
    needed = isinstance(statement, ast.Return) or _binds_parsed_namespace(statement)
    for part in own:
        for node in ast.walk(part):
            if isinstance(node, ast.Name):
                names.add(node.id)
                if isinstance(node.ctx, ast.Store):
                    bound.add(node.id)
            elif guarded and isinstance(node, ast.Call):
                needed = True
    return _Parts(frozenset(names), frozenset(bound), needed)


def statement_parts(statement: ast.stmt) -> Tuple[List[ast.AST], List[Sequence[ast.stmt]]]:
    """A statement's own expressions (a compound statement's header), and its blocks of statements."""
    own: List[ast.AST] = []
    blocks: List[Sequence[ast.stmt]] = []
    for _, value in ast.iter_fields(statement):
        if isinstance(value, ast.AST):
            own.append(value)
        elif isinstance(value, list) and value:
            if isinstance(value[0], ast.stmt):
                blocks.append(value)
            elif isinstance(value[0], (ast.excepthandler, ast.match_case)):
                for part in value:
                    own.extend(child for name, child in ast.iter_fields(part) if name != "body"
                               and isinstance(child, ast.AST))
                    blocks.append(part.body)
            else:
                own.extend(child for child in value if isinstance(child, ast.AST))
    return own, blocks


def _header_names(definition: ast.stmt) -> Set[str]:
    """The names a definition's header reads (decorators, defaults, annotations, bases): in its enclosing
    scope's text, they may be looked up there."""
    names: Set[str] = set()
    own, _ = statement_parts(definition)
    for part in own:
        names.update(node.id for node in ast.walk(part) if isinstance(node, ast.Name))
    return names


def _binds_parsed_namespace(statement: ast.stmt) -> bool:
    """`args = parser.parse_args()`: the names an argument namespace is bound to are read from the text when it is
    walked whole."""
    if not isinstance(statement, ast.Assign) or not isinstance(statement.value, ast.Call):
        return False
    func = statement.value.func
    method = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    return method in PARSE_METHODS


def _mentions_name(expression: ast.expr, name: str) -> bool:
    return any(isinstance(node, ast.Name) and node.id == name for node in ast.walk(expression))


def _whole_lines(statement: ast.stmt, lines: Sequence[str]) -> "Span | None":
    """The statement's lines when it alone is written on them (nothing before it on its first line, nothing but a
    comment after it on its last), else None."""
    first, last = statement.lineno, statement.end_lineno
    if last is None or statement.end_col_offset is None:
        return None
    opening = lines[first - 1]
    code = opening.lstrip(" \t\f")
    if len(opening) - len(code) != statement.col_offset or (isinstance(statement, ast.If) and code.startswith("elif")):
        return None
    rest = lines[last - 1].encode("utf-8", "surrogatepass")[statement.end_col_offset :].strip()
    if rest and not rest.startswith(b"#"):
        return None
    return first, last
