"""The statements inside the functions libcst reads that it need not read either: the model surgery, data
loading and logging around the few statements of an entry point that hold a setting.

The collector walks only the statements the prefilter marks. What else reads a function's statements:
- the scope lookups (`Context.assignments`), of a name written as a trainer's `eval_dataset=`,
  `compute_metrics=` or `preprocess_logits_for_metrics=`, as a keyword that names a knob
  (`per_device_train_batch_size=MICRO_BATCH_SIZE`), as a `**` splat, as the `config=` of
  `deepspeed.initialize`, or as an entry of a dict (the `eval_dataset` of a splatted data module): every binding
  of the name in the scope, with the branches around it;
- the return statements of a function (a trainer's `**` splat may call it);
- the calls under the main guard (`main_calls`), and the parse calls binding argument namespaces (read from the
  text when it is walked whole).
A statement that is none of these, holds none of them and binds no name a kept statement looks up (a kept
binding's own lookups included) is handed to libcst as `pass` on its first line and blank lines after, so every
other line keeps its number and text. A statement that does not have its lines to itself (`a = 1; b = 2`, the
body of `if x: y`, an `elif`) stays as written.
"""

from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, Iterable, Iterator, List, Optional, Sequence, Set, Tuple

from trainlint.readers.python.context import PARSE_METHODS
from trainlint.readers.python.tree_nodes import breadth_first, breadth_first_all
from trainlint.readers.python.values import names_a_knob

DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
# Keywords whose value, when a bare name, is looked up in its scope (eval_data.py, deepspeed_calls.py; a
# `dict(eval_dataset=...)` entry too).
LOOKED_UP_KEYWORDS = frozenset(
    {"eval_dataset", "compute_metrics", "preprocess_logits_for_metrics", "config", "config_params",
     "modules_to_save"}  # adapters.py: LoraConfig's, set in the arms of an `if`
)
# A line, by number from 1: the first and the last of a statement handed to libcst as `pass`.
Span = Tuple[int, int]
# A statement nested deeper than this (or concatenating more strings) stays: the walks over libcst's tree recurse,
# and where one would exhaust the stack reading the whole text, the file is reported unanalysable as before.
MAX_IDLE_DEPTH = 40
# Fewer characters than this cannot nest that deep.
SHORT_LINE_CHARS = 100


def idle_statement_spans(
    body: Sequence[ast.stmt], marked: FrozenSet[int], builders: FrozenSet[int], lines: Sequence[str]
) -> List[Span]:
    """The lines of the outermost statements, inside the marked statements, that libcst need not read.
    `builders`: ids of the top-level functions that may return an eval dict (read, marked or not)."""
    file = _File(marked, lines)
    module = _Scope(file)
    statements: List[ast.stmt] = []
    spans: List[Span] = []
    for statement in body:
        if isinstance(statement, FUNCTIONS):
            if id(statement) in marked or id(statement) in builders:
                spans.extend(file.function_spans(statement))
            continue
        statements.append(statement)
        if isinstance(statement, ast.ClassDef):
            pass  # a marked class stays (its fields are read as written), an idle one is reduced already
        elif not statement_parts(statement)[1] or (
            isinstance(statement, ast.If) and _mentions_name(statement.test, "__name__")
        ):
            # every call of a top-level line and under the main guard may name a function the file runs
            module.guards.add(id(statement))
    while True:  # the functions it finds may look names up in the module's scope
        looked_up = set(file.looked_up)
        module_spans = module.idle_spans(statements, looked_up)
        if file.looked_up <= looked_up:
            return spans + module_spans


class _File:
    """What the scopes of one module share. `looked_up`: every name a function's kept statements look up, which
    a lookup may make in the module's scope (a node the collector has not reached yet has no parent recorded,
    and its scope is the module: a trainer's `eval_dataset=` value)."""

    def __init__(self, marked: FrozenSet[int], lines: Sequence[str]):
        self.marked = marked
        self.lines = lines
        self.looked_up: Set[str] = set()

    def function_spans(self, function: ast.stmt) -> List[Span]:
        # a lookup from the header (a decorator, a default) is made in the function's own scope
        scope = _Scope(self)
        header = _lookups(breadth_first_all(statement_parts(function)[0]))
        spans = scope.idle_spans(function.body, header)  # type: ignore[attr-defined]
        self.looked_up |= scope.read
        return spans

    def definition_spans(self, definition: ast.stmt) -> List[Span]:
        """A marked function is narrowed. In a marked class, the fields (`x: int = 1`, a dataclass's) and the
        marked statements stay, the marked methods narrowed; the rest (docstrings, class attributes) binds nothing
        a lookup reads (a class body is no scope of the tables) and is not walked."""
        if isinstance(definition, FUNCTIONS):
            return self.function_spans(definition)
        spans: List[Span] = []
        for statement in getattr(definition, "body", ()):
            if id(statement) in self.marked:
                if isinstance(statement, DEFINITIONS):
                    spans.extend(self.definition_spans(statement))
            elif not isinstance(statement, (ast.AnnAssign,) + DEFINITIONS):  # idle definitions are reduced already
                span = _whole_lines(statement, self.lines)
                if span is not None:
                    spans.append(span)
        return spans


@dataclass
class _Parts:
    """One statement's own parts (a compound statement's header; a simple statement whole), the names it binds as
    the scope tables record them, whether the parts alone keep the statement, and the statement's blocks."""

    own: List[ast.AST]
    bound: FrozenSet[str]
    needed: bool
    blocks: List[Sequence[ast.stmt]]


@dataclass
class _Walk:
    """One pass over a scope. `read`: the names the kept statements look up, as the passes before found them;
    `looked_up`: as this pass finds them; `spans`: the idle statements; `definitions`: the marked ones met."""

    read: Set[str]
    looked_up: Set[str] = field(default_factory=set)
    spans: List[Span] = field(default_factory=list)
    definitions: List[ast.stmt] = field(default_factory=list)


class _Scope:
    """The statements of one function (or of the module), nested blocks included: what a lookup from a kept
    statement of the scope may reach. The functions defined in it are scopes of their own. `guards`: ids of
    the statements whose calls stay (top-level lines, main guards)."""

    def __init__(self, file: _File):
        self._file = file
        self._marked = file.marked
        self._lines = file.lines
        self.read: Set[str] = set()
        self.guards: Set[int] = set()
        self._parts: Dict[int, _Parts] = {}
        self._lookups: Dict[int, FrozenSet[str]] = {}
        self._spans: Dict[int, Optional[Span]] = {}

    def idle_spans(self, body: Sequence[ast.stmt], looked_up: Iterable[str] = ()) -> List[Span]:
        """`looked_up`: names looked up in the scope from outside its body (from a function's header)."""
        read: Set[str] = set(looked_up)
        while True:  # until the names the kept statements look up no longer grow
            walk = _Walk(read)
            for statement in body:
                self._statement(statement, walk, id(statement) in self.guards)
            if walk.looked_up <= read:
                break
            read |= walk.looked_up
        self.read = read
        spans = walk.spans
        for definition in walk.definitions:
            spans.extend(self._file.definition_spans(definition))
        return spans

    def _statement(self, statement: ast.stmt, walk: _Walk, guarded: bool) -> bool:
        """Adds the statement's idle spans to the walk; True when the statement stays."""
        marked = id(statement) in self._marked
        if isinstance(statement, DEFINITIONS):
            # an idle one is reduced already (prefilter); a marked one stays: a function's body is a scope of its
            # own, a class's body looks names up in the enclosing scope
            if marked:
                walk.looked_up.update(self._definition_lookups(statement))
                walk.definitions.append(statement)
            return marked
        parts = self._parts_of(statement, guarded)
        inner = _Walk(walk.read)
        inner_kept = False
        for block in parts.blocks:
            for child in block:
                inner_kept = self._statement(child, inner, guarded) or inner_kept
        walk.looked_up.update(inner.looked_up)
        walk.definitions.extend(inner.definitions)
        if parts.needed or inner_kept or marked or not parts.bound.isdisjoint(walk.read):
            walk.looked_up.update(self._looked_up(statement, parts.own))
            if inner_kept and isinstance(statement, ast.If):
                # the test of a branch that binds a looked-up name decides its value (adapters.py reads a name
                # the test names: `is_chat_model = "chat" in ...`)
                walk.looked_up.update(node.id for node in breadth_first(statement.test) if isinstance(node, ast.Name))
            walk.spans.extend(inner.spans)
            return True
        if id(statement) not in self._spans:  # the same in every pass
            self._spans[id(statement)] = _whole_lines(statement, self._lines)
        span = self._spans[id(statement)]
        if span is None:  # shares a line with other code: it goes with the statement around it, or stays
            walk.spans.extend(inner.spans)
        else:
            walk.spans.append(span)
        return False

    def _parts_of(self, statement: ast.stmt, guarded: bool) -> _Parts:
        found = self._parts.get(id(statement))
        if found is None:
            own, blocks = statement_parts(statement)
            needed = isinstance(statement, ast.Return) or _binds_parsed_namespace(statement) or (
                guarded and any(isinstance(node, ast.Call) for node in breadth_first_all(own))
            )
            found = _Parts(own, _bound(statement), needed, blocks)
            self._parts[id(statement)] = found
        return found

    def _looked_up(self, statement: ast.stmt, own: Sequence[ast.AST]) -> FrozenSet[str]:
        found = self._lookups.get(id(statement))
        if found is None:
            found = _lookups(breadth_first_all(own))
            if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Name):
                found |= {statement.value.id}  # a kept `A = B`: the value reader follows it to B's binding
            self._lookups[id(statement)] = found
        return found

    def _definition_lookups(self, definition: ast.stmt) -> FrozenSet[str]:
        """What a definition looks up in the enclosing scope: from a function's header; from a class, outside the
        bodies of its methods (a method's lookups are its own, or the module's: see _File)."""
        found = self._lookups.get(id(definition))
        if found is None:
            found = _lookups(_outside_functions(definition))
            self._lookups[id(definition)] = found
        return found


def _lookups(nodes: Iterable[ast.AST]) -> FrozenSet[str]:
    """The names the extractors may look up in the scope, written in these nodes (a superset: any call's
    looked-up keyword or `**` splat, any dict entry)."""
    looked_up: Set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Call):
            for keyword in node.keywords:
                if isinstance(keyword.value, ast.Name) and (keyword.arg is None or keyword.arg in LOOKED_UP_KEYWORDS
                                                            or names_a_knob(keyword.arg)):
                    looked_up.add(keyword.value.id)
        elif isinstance(node, ast.Dict):
            looked_up.update(value.id for value in node.values if isinstance(value, ast.Name))
    return frozenset(looked_up)


def _bound(statement: ast.stmt) -> FrozenSet[str]:
    """The names in the targets the scope tables record (context.py's _AssignmentIndex: assignments, `for` and
    `with ... as` targets), and any other name written in them."""
    targets: List[ast.AST] = []
    if isinstance(statement, ast.Assign):
        targets = list(statement.targets)
    elif isinstance(statement, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
        targets = [statement.target]
    elif isinstance(statement, (ast.With, ast.AsyncWith)):
        targets = [item.optional_vars for item in statement.items if item.optional_vars is not None]
    elif (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)
          and isinstance(statement.value.func, ast.Attribute) and isinstance(statement.value.func.value, ast.Name)):
        targets = [statement.value.func.value]  # `modules_to_save.append("vpm")` changes what the name holds
    return frozenset(node.id for node in breadth_first_all(targets) if isinstance(node, ast.Name))


def _outside_functions(definition: ast.stmt) -> Iterator[ast.AST]:
    """The nodes of a definition, the bodies of the functions in it (itself included) left out."""
    stack: List[ast.AST] = [definition]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, FUNCTIONS):
            stack.extend(statement_parts(node)[0])
        else:
            stack.extend(ast.iter_child_nodes(node))


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


def _binds_parsed_namespace(statement: ast.stmt) -> bool:
    """`args = parser.parse_args()`: the names an argument namespace is bound to are read from the text when it is
    walked whole."""
    if not isinstance(statement, ast.Assign) or not isinstance(statement.value, ast.Call):
        return False
    func = statement.value.func
    method = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    return method in PARSE_METHODS


def _mentions_name(expression: ast.expr, name: str) -> bool:
    return any(isinstance(node, ast.Name) and node.id == name for node in breadth_first(expression))


def _whole_lines(statement: ast.stmt, lines: Sequence[str]) -> Optional[Span]:
    """The statement's lines when it has them to itself (nothing before it on its first line, nothing but a
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
    return (first, last) if _shallow(statement, lines) else None


def _shallow(statement: ast.stmt, lines: Sequence[str]) -> bool:
    """True when libcst's tree of the statement cannot be deep: within MAX_IDLE_DEPTH levels of the stdlib's, no
    string made of more than MAX_IDLE_DEPTH pieces (libcst nests each one)."""
    if sum(len(line) for line in lines[statement.lineno - 1 : statement.end_lineno]) < SHORT_LINE_CHARS:
        return True
    stack: List[Tuple[ast.AST, int]] = [(statement, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_IDLE_DEPTH:
            return False
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
            # a triple-quoted piece takes six quotes; a text holding quotes is tokenized to count its pieces
            if _quotes(node, lines) > 6 * MAX_IDLE_DEPTH and _pieces(node, lines) > MAX_IDLE_DEPTH:
                return False
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return True


def _quotes(constant: ast.Constant, lines: Sequence[str]) -> int:
    """The quote characters a string constant is written with (at least two a piece)."""
    if constant.end_lineno is None or constant.end_col_offset is None:
        return 0
    written = lines[constant.lineno - 1 : constant.end_lineno]
    return sum(line.count('"') + line.count("'") for line in written)


def _pieces(constant: ast.Constant, lines: Sequence[str]) -> int:
    """The string tokens a constant is written with (`"a" "b"` is one constant of two)."""
    encoded = [line.encode("utf-8", "surrogatepass") for line in lines[constant.lineno - 1 : constant.end_lineno]]
    encoded[-1] = encoded[-1][: constant.end_col_offset]
    encoded[0] = encoded[0][constant.col_offset :]
    written = b"\n".join(encoded).decode("utf-8", "surrogatepass")
    try:
        tokens = tokenize.generate_tokens(io.StringIO("(" + written + ")").readline)
        return sum(1 for token in tokens if token.type == tokenize.STRING)
    except (tokenize.TokenError, SyntaxError, ValueError):
        return MAX_IDLE_DEPTH + 1
