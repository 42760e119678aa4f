"""libcst positions computed one top-level statement at a time, and only for the statements that
hold a node whose origin is asked for.

libcst's PositionProvider renders the whole module to count lines and columns: on a file of model
code that is most of the reading time, and almost every position goes unused. A top-level statement
starts at column 0 on the line the stdlib parser reports, so rendering it alone and shifting its lines
gives exactly the positions the whole-module pass gives."""

from __future__ import annotations

from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import libcst as cst
from libcst.metadata import CodePosition, CodeRange, MetadataWrapper, PositionProvider

Parents = Callable[[], Mapping[cst.CSTNode, cst.CSTNode]]


class StatementPositions:
    """A `.get(node)` lookup like the PositionProvider mapping, filled lazily."""

    def __init__(self, module: cst.Module, first_lines: Sequence[int], parents: Parents):
        self._module = module
        self._parents = parents
        self._first_line = {id(statement): line for statement, line in zip(module.body, first_lines)}
        self._pending: List[cst.BaseStatement] = list(module.body)
        self._done: List[Tuple[Mapping[cst.CSTNode, CodeRange], int]] = []
        self._whole: Optional[Mapping[cst.CSTNode, CodeRange]] = None
        self._walking: Optional[cst.BaseStatement] = None

    def walking(self, statement: cst.BaseStatement) -> None:
        """The statement the collector walks now: a node it examines before visiting (an argument of
        the call being visited) has no parent recorded yet, and is most likely in this statement."""
        self._walking = statement

    def get(self, node: cst.CSTNode) -> Optional[CodeRange]:
        found = self._known(node)
        if found is not None:
            return found
        statement = self._top_statement(node) or self._walking
        if statement is not None and any(waiting is statement for waiting in self._pending):
            self._render(statement)
            found = self._known(node)
            if found is not None:
                return found
        # A node the collector did not walk to (a module-level value found through a scope lookup):
        # render the remaining statements in order until it turns up.
        while self._pending:
            self._render(self._pending[0])
            found = self._known(node)
            if found is not None:
                return found
        if self._whole is None:  # the module itself, or a node outside its statements
            self._whole = MetadataWrapper(self._module, unsafe_skip_copy=True).resolve(PositionProvider)
        return self._whole.get(node)

    def _known(self, node: cst.CSTNode) -> Optional[CodeRange]:
        for ranges, shift in self._done:
            found = ranges.get(node)
            if found is not None:
                return _shifted(found, shift) if shift else found
        return None

    def _top_statement(self, node: cst.CSTNode) -> Optional[cst.BaseStatement]:
        parents: Dict = self._parents()  # type: ignore[assignment]
        current: Optional[cst.CSTNode] = node
        while current is not None:
            if id(current) in self._first_line:
                return current  # type: ignore[return-value]
            current = parents.get(current)
        return None

    def _render(self, statement: cst.BaseStatement) -> None:
        self._pending = [waiting for waiting in self._pending if waiting is not statement]
        alone = self._module.with_changes(body=[statement], header=(), footer=())
        ranges = MetadataWrapper(alone, unsafe_skip_copy=True).resolve(PositionProvider)
        shift = self._first_line[id(statement)] - ranges[statement].start.line
        self._done.append((ranges, shift))


def _shifted(found: CodeRange, lines: int) -> CodeRange:
    return CodeRange(
        CodePosition(found.start.line + lines, found.start.column),
        CodePosition(found.end.line + lines, found.end.column),
    )
