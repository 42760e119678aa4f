"""What every part of the shell reader shares: the source, what it found, and origins in the source."""

from __future__ import annotations

from typing import List, Tuple

from trainlint.core import Diagnostic, Origin
from trainlint.readers.facts import Flow, Launch
from trainlint.readers.shell.syntax import node_text, shorten
from trainlint.readers.shell.values import Doc, Node, Span
from trainlint.readers.source import SourceText


class ReaderBase:
    """State of one reading; every concern of the reader is a mixin over it."""

    def __init__(self, source: SourceText) -> None:
        self.source = source
        self.diagnostics: List[Diagnostic] = []
        self.flows: List[Flow] = []
        self.launches: List[Launch] = []
        self.called_functions: set = set()
        self.reported_continuations: set = set()

    def _origin(self, span: Span) -> Origin:
        return self.source.origin(span[0], span[1])

    def _node_span(self, doc: Doc, node: Node) -> Span:
        return doc.span(node.start_byte, node.end_byte)

    def _outer_text(self, span: Span) -> str:
        return self.source.data[span[0] : span[1]].decode("utf-8", errors="replace")

    def _report_syntax_errors(self, doc: Doc) -> None:
        found: List[Tuple[int, Diagnostic]] = []
        stack = [doc.root]
        while stack:
            node = stack.pop()
            if node.is_missing:
                origin = self._origin(self._node_span(doc, node))
                message = (
                    f"bash syntax error at line {origin.line}, column {origin.column}: missing "
                    f"`{node.type}`; the rest was read as far as it parsed"
                )
                found.append((origin.start_byte, Diagnostic("syntax-error", message, self.source.path, origin)))
            elif node.type == "ERROR":
                origin = self._origin(self._node_span(doc, node))
                message = (
                    f"bash syntax error at line {origin.line}, column {origin.column}: cannot parse "
                    f"`{shorten(node_text(doc, node), 40)}`; the rest was read as far as it parsed"
                )
                found.append((origin.start_byte, Diagnostic("syntax-error", message, self.source.path, origin)))
            elif node.has_error:
                stack.extend(node.children)
        self.diagnostics.extend(diagnostic for _, diagnostic in sorted(found, key=lambda item: item[0]))

    def _unmodelled(self, message: str, span: Span) -> None:
        origin = self._origin(span)
        diagnostic = Diagnostic("unmodelled-construct", message, self.source.path, origin)
        if diagnostic not in self.diagnostics:
            self.diagnostics.append(diagnostic)
