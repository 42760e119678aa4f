"""libcst positions computed one statement at a time, the innermost statement around a node whose origin is
asked for, and only for those.

libcst's PositionProvider renders the whole module to count lines and columns: on a file of model code that is
most of the reading time, and almost every position goes unused. A statement that starts a line starts on the
line the stdlib parser reports, indented by the whitespace that line starts with; rendering it alone, with that
whitespace as the indentation of its block, gives the same columns the whole-module pass gives, and its lines
shifted by a constant. libcst renders each node's text the same wherever it renders it (the indentation of a
block is the only context it takes), so no position differs from the whole-module pass.

The rendering counts lines and columns only, and keeps each node's span as plain numbers (by node id): libcst's
own position state builds three objects per node and collects the text, most of the cost of a render, when few
of the positions are ever asked for."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Set, Tuple

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst.metadata import CodePosition, CodeRange, MetadataWrapper, PositionProvider
from libcst.metadata.position_provider import NEWLINE_RE

from trainlint.readers.python.walk import children

Parents = Callable[[], Mapping[cst.CSTNode, cst.CSTNode]]
Ancestors = Callable[[], Sequence[cst.CSTNode]]
# Where a node's code starts and ends: (start line, start column, end line, end column), as libcst counts them.
Span = Tuple[int, int, int, int]


@dataclass(frozen=True)
class Anchor:
    """Where a statement's code starts: its line, and the indentation of the block it is in."""

    line: int
    indent: str


class StatementPositions:
    """A `.get(node)` lookup like the PositionProvider mapping, filled lazily.

    `anchors`: statements by id, with where they start (every top-level statement, and the ones below that the
    screen matched with the stdlib's); `parents`: the parents recorded so far; `ancestors`: the nodes the
    collector is inside now (a node it examines before visiting, an argument of the call being visited, has no
    parent recorded yet, and is most likely in one of them)."""

    def __init__(
        self,
        module: cst.Module,
        anchors: Dict[int, Anchor],
        parents: Parents,
        ancestors: Ancestors = lambda: (),
        seen_parents: Parents = lambda: {},
    ):
        self._module = module
        self._anchors = anchors
        self._parents = parents
        self._seen_parents = seen_parents
        # Parents recorded here, ahead of the collector's walk: kept apart from the walk's own, which tell
        # scopes and branches only of what the walk has reached.
        self._adopted: Dict[cst.CSTNode, cst.CSTNode] = {}
        self._ancestors = ancestors
        # by node id: the module holds every node asked for, so no id is reused while it is looked up
        self._spans: Dict[int, Span] = {}
        self._rendered: Set[int] = set()
        self._pending: List[cst.BaseStatement] = list(module.body)
        self._whole: Optional[Mapping[cst.CSTNode, CodeRange]] = None
        self._walking: Optional[cst.BaseStatement] = None
        self._headers: Set[int] = set()

    def walking(self, statement: cst.BaseStatement) -> None:
        """A statement the collector looks into without walking it (a function building an eval dataset)."""
        self._walking = statement

    def get(self, node: cst.CSTNode) -> Optional[CodeRange]:
        found = self._span(node)
        if found is not None:
            return _code_range(found)
        for statement in self._candidates(node):
            if id(statement) in self._rendered:
                continue
            header = _header_alone(statement)
            if header is not None and id(statement) not in self._headers:  # the node may be in the header
                self._headers.add(id(statement))
                self._render(statement, header)
                found = self._span(node)
                if found is not None:
                    return _code_range(found)
            self._render(statement)
            found = self._span(node)
            if found is not None:
                return _code_range(found)
        # A node the collector did not walk to (a module-level value found through a scope lookup):
        # render the remaining top-level statements in order until it turns up.
        for statement in self._pending:
            if id(statement) not in self._rendered:
                self._render(statement)
                found = self._span(node)
                if found is not None:
                    return _code_range(found)
        if self._whole is None:  # the module itself, or a node outside its statements
            self._whole = MetadataWrapper(self._module, unsafe_skip_copy=True).resolve(PositionProvider)
        return self._whole.get(node)

    def _span(self, node: cst.CSTNode) -> Optional[Span]:
        return self._spans.get(id(node))

    def _candidates(self, node: cst.CSTNode) -> List[cst.CSTNode]:
        """Anchored statements around the node, innermost first. A node the walk has not reached yet (an
        argument of the call being visited, a field of the class being visited, a value in a function looked
        into) has its parents recorded first, from the node being visited down."""
        chain, complete = self._chain(node)
        if not complete:
            ancestors = self._ancestors()
            for root in ([ancestors[-1]] if ancestors else []) + ([self._walking] if self._walking else []):
                self._adopt(root)
                chain, complete = self._chain(node)
                if complete:
                    break
        return chain

    def _chain(self, node: cst.CSTNode) -> Tuple[List[cst.CSTNode], bool]:
        parents: Dict = self._parents()  # type: ignore[assignment]
        seen, adopted = self._seen_parents(), self._adopted
        anchors = self._anchors
        found: List[cst.CSTNode] = []
        current: Optional[cst.CSTNode] = node
        while current is not None:
            if id(current) in anchors:
                found.append(current)
            parent = parents.get(current) or seen.get(current) or adopted.get(current)
            if parent is None and current is not self._module:
                return found, False  # the chain stops short of the module: the node was not walked to
            current = parent
        return found, True

    def _adopt(self, root: cst.CSTNode) -> None:
        """Records the parents below `root`, as the collector's walk would."""
        adopted = self._adopted
        stack = [root]
        while stack:
            node = stack.pop()
            for child in children(node):
                adopted.setdefault(child, node)
                stack.append(child)

    def _render(self, statement: cst.CSTNode, header: Optional[cst.CSTNode] = None) -> None:
        """Renders the statement, or its `header` only (the statement with a bare `pass` for its body), where
        the stdlib says the statement starts."""
        if header is None:
            self._rendered.add(id(statement))
        anchor = self._anchors.get(id(statement))
        if anchor is None:
            return
        rendered = statement if header is None else header
        state = CountingCodegenState(
            self._module.default_indent,
            self._module.default_newline,
            [anchor.indent] if anchor.indent else [],
            # each leading empty line renders as one line: the statement then starts on its own line, unshifted
            anchor.line - len(getattr(statement, "leading_lines", ())),
        )
        rendered._codegen(state)
        spans = state.spans
        start_line, start_column = spans[id(rendered)][:2]
        if start_column != len(anchor.indent):
            return  # not where the stdlib says it starts: leave it to an enclosing statement
        shift = anchor.line - start_line
        if header is not None:
            del spans[id(header)]  # the copy's own range is not the statement's
        if shift:
            spans = {key: (found[0] + shift, found[1], found[2] + shift, found[3]) for key, found in spans.items()}
        self._spans.update(spans)


class CountingCodegenState(CodegenState):
    """libcst's codegen state as its PositionProvider's, which records where each node starts and ends (its
    syntactic position when the node records one), counting lines and columns without collecting the text.
    A token without a line break moves the column by its length; libcst splits every token on line breaks.
    For statements only: a Module's codegen reads the collected text."""

    def __init__(self, default_indent: str, default_newline: str, indent_tokens: List[str], line: int):
        super().__init__(default_indent=default_indent, default_newline=default_newline, indent_tokens=indent_tokens)
        self.line = line
        self.column = 0
        self.spans: Dict[int, Span] = {}
        self._starts: List[Tuple[int, int]] = []

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.add_token(token)

    def add_token(self, value: str) -> None:
        if "\n" in value or "\r" in value:
            segments = NEWLINE_RE.split(value)
            self.line += len(segments) - 1
            self.column = len(segments[-1])
        else:
            self.column += len(value)

    def before_codegen(self, node: cst.CSTNode) -> None:
        self._starts.append((self.line, self.column))

    def after_codegen(self, node: cst.CSTNode) -> None:
        line, column = self._starts.pop()
        key = id(node)
        if key not in self.spans:  # a syntactic position recorded stays
            self.spans[key] = (line, column, self.line, self.column)

    def record_syntactic_position(  # type: ignore[override]
        self,
        node: cst.CSTNode,
        *,
        start_node: Optional[cst.CSTNode] = None,
        end_node: Optional[cst.CSTNode] = None,
    ) -> "_SyntacticPosition":
        return _SyntacticPosition(self, node, start_node, end_node)


class _SyntacticPosition:
    """Records a node's span from where its syntax starts to where it ends, or from its start node's start to
    its end node's end (libcst's own is a generator-based context manager, several times the cost)."""

    __slots__ = ("_state", "_node", "_start_node", "_end_node", "_line", "_column")

    def __init__(self, state: CountingCodegenState, node: cst.CSTNode, start_node, end_node):
        self._state, self._node, self._start_node, self._end_node = state, node, start_node, end_node
        self._line, self._column = state.line, state.column

    def __enter__(self) -> None:
        return None

    def __exit__(self, *_: object) -> bool:
        state = self._state
        spans = state.spans
        start_line, start_column = self._line, self._column
        if self._start_node is not None:
            start_line, start_column = spans[id(self._start_node)][:2]
        end_line, end_column = state.line, state.column
        if self._end_node is not None:
            end_line, end_column = spans[id(self._end_node)][2:]
        spans[id(self._node)] = (start_line, start_column, end_line, end_column)
        return False


def _header_alone(statement: cst.CSTNode) -> Optional[cst.CSTNode]:
    """A compound statement with `pass` for its body and no `else`: its header renders as in the whole
    statement, without the cost of rendering the body (an `if` around half a function)."""
    body = cst.IndentedBlock(body=[cst.SimpleStatementLine(body=[cst.Pass()])])
    if isinstance(statement, (cst.If, cst.For, cst.While)):
        return statement.with_changes(body=body, orelse=None)
    if isinstance(statement, (cst.With, cst.FunctionDef, cst.ClassDef)):
        return statement.with_changes(body=body)
    return None


def _code_range(span: Span) -> CodeRange:
    return CodeRange(CodePosition(span[0], span[1]), CodePosition(span[2], span[3]))
