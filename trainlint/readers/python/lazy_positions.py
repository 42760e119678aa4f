"""libcst positions computed one statement at a time, the innermost statement around a node whose origin is
asked for, and only for those.

libcst's PositionProvider renders the whole module to count lines and columns: on a file of model code that is
most of the reading time, and almost every position goes unused. A statement that starts a line starts on the
line the stdlib parser reports, indented by the whitespace that line starts with; rendering it alone, with that
whitespace as the indentation of its block, gives the same columns the whole-module pass gives, and its lines
shifted by a constant. libcst renders each node's text the same wherever it renders it (the indentation of a
block is the only context it takes), so no position differs from the whole-module pass."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Set, Tuple

import libcst as cst
from libcst.metadata import CodePosition, CodeRange, MetadataWrapper, PositionProvider
from libcst.metadata.position_provider import PositionProvidingCodegenState

from trainlint.readers.python.walk import children

Parents = Callable[[], Mapping[cst.CSTNode, cst.CSTNode]]
Ancestors = Callable[[], Sequence[cst.CSTNode]]


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
        self._ranges: Dict[cst.CSTNode, CodeRange] = {}
        self._rendered: Set[int] = set()
        self._pending: List[cst.BaseStatement] = list(module.body)
        self._whole: Optional[Mapping[cst.CSTNode, CodeRange]] = None
        self._walking: Optional[cst.BaseStatement] = None
        self._headers: Set[int] = set()

    def walking(self, statement: cst.BaseStatement) -> None:
        """A statement the collector looks into without walking it (a function building an eval dataset)."""
        self._walking = statement

    def get(self, node: cst.CSTNode) -> Optional[CodeRange]:
        found = self._ranges.get(node)
        if found is not None:
            return found
        for statement in self._candidates(node):
            if id(statement) in self._rendered:
                continue
            header = _header_alone(statement)
            if header is not None and id(statement) not in self._headers:  # the node may be in the header
                self._headers.add(id(statement))
                self._render(statement, header)
                found = self._ranges.get(node)
                if found is not None:
                    return found
            self._render(statement)
            found = self._ranges.get(node)
            if found is not None:
                return found
        # A node the collector did not walk to (a module-level value found through a scope lookup):
        # render the remaining top-level statements in order until it turns up.
        for statement in self._pending:
            if id(statement) not in self._rendered:
                self._render(statement)
                found = self._ranges.get(node)
                if found is not None:
                    return found
        if self._whole is None:  # the module itself, or a node outside its statements
            self._whole = MetadataWrapper(self._module, unsafe_skip_copy=True).resolve(PositionProvider)
        return self._whole.get(node)

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
        provider = PositionProvider()
        state = PositionProvidingCodegenState(
            default_indent=self._module.default_indent,
            default_newline=self._module.default_newline,
            provider=provider,
            indent_tokens=[anchor.indent] if anchor.indent else [],
            # each leading empty line renders as one line: the statement then starts on its own line, unshifted
            line=anchor.line - len(getattr(statement, "leading_lines", ())),
        )
        rendered._codegen(state)
        ranges: Dict[cst.CSTNode, CodeRange] = provider._computed
        start = ranges[rendered].start
        if start.column != len(anchor.indent):
            return  # not where the stdlib says it starts: leave it to an enclosing statement
        shift = anchor.line - start.line
        if header is not None:
            del ranges[header]  # the copy's own range is not the statement's
        if shift:
            ranges = {node: _shifted(found, shift) for node, found in ranges.items()}
        self._ranges.update(ranges)


def _header_alone(statement: cst.CSTNode) -> Optional[cst.CSTNode]:
    """A compound statement with `pass` for its body and no `else`: its header renders as in the whole
    statement, without the cost of rendering the body (an `if` around half a function)."""
    body = cst.IndentedBlock(body=[cst.SimpleStatementLine(body=[cst.Pass()])])
    if isinstance(statement, (cst.If, cst.For, cst.While)):
        return statement.with_changes(body=body, orelse=None)
    if isinstance(statement, (cst.With, cst.FunctionDef, cst.ClassDef)):
        return statement.with_changes(body=body)
    return None


def _shifted(found: CodeRange, lines: int) -> CodeRange:
    return CodeRange(
        CodePosition(found.start.line + lines, found.start.column),
        CodePosition(found.end.line + lines, found.end.column),
    )
