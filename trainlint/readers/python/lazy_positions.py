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
from typing import Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Set

import libcst as cst
from libcst.metadata import CodePosition, CodeRange, MetadataWrapper, PositionProvider
from libcst.metadata.position_provider import PositionProvidingCodegenState

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
    ):
        self._module = module
        self._anchors = anchors
        self._parents = parents
        self._ancestors = ancestors
        self._ranges: Dict[cst.CSTNode, CodeRange] = {}
        self._rendered: Set[int] = set()
        self._pending: List[cst.BaseStatement] = list(module.body)
        self._whole: Optional[Mapping[cst.CSTNode, CodeRange]] = None
        self._walking: Optional[cst.BaseStatement] = None

    def walking(self, statement: cst.BaseStatement) -> None:
        """A statement the collector looks into without walking it (a function building an eval dataset)."""
        self._walking = statement

    def get(self, node: cst.CSTNode) -> Optional[CodeRange]:
        found = self._ranges.get(node)
        if found is not None:
            return found
        for statement in self._candidates(node):
            if id(statement) not in self._rendered:
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

    def _candidates(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        """Anchored statements that may hold the node, innermost first."""
        parents: Dict = self._parents()  # type: ignore[assignment]
        anchors = self._anchors
        current: Optional[cst.CSTNode] = node
        while current is not None:
            if id(current) in anchors:
                yield current
            parent = parents.get(current)
            if parent is None and current is not self._module:
                break  # the chain stops short of the module: the node was not walked to
            current = parent
        else:
            return
        for ancestor in reversed(self._ancestors()):
            if id(ancestor) in anchors:
                yield ancestor
        if self._walking is not None:
            yield self._walking

    def _render(self, statement: cst.CSTNode) -> None:
        self._rendered.add(id(statement))
        anchor = self._anchors.get(id(statement))
        if anchor is None:
            return
        provider = PositionProvider()
        state = PositionProvidingCodegenState(
            default_indent=self._module.default_indent,
            default_newline=self._module.default_newline,
            provider=provider,
            indent_tokens=[anchor.indent] if anchor.indent else [],
            # each leading empty line renders as one line: the statement then starts on its own line, unshifted
            line=anchor.line - len(getattr(statement, "leading_lines", ())),
        )
        statement._codegen(state)
        ranges: Dict[cst.CSTNode, CodeRange] = provider._computed
        start = ranges[statement].start
        if start.column != len(anchor.indent):
            return  # not where the stdlib says it starts: leave it to an enclosing statement
        shift = anchor.line - start.line
        if shift:
            ranges = {node: _shifted(found, shift) for node, found in ranges.items()}
        self._ranges.update(ranges)


def _shifted(found: CodeRange, lines: int) -> CodeRange:
    return CodeRange(
        CodePosition(found.start.line + lines, found.start.column),
        CodePosition(found.end.line + lines, found.end.column),
    )
