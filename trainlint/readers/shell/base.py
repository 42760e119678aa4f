"""What every part of the shell reader shares: the source, what it found, and origins in the source."""

from __future__ import annotations

from typing import List

from trainlint.core import Diagnostic, DiagnosticKind, Origin
from trainlint.readers.facts import Flow, Launch, ScriptCall
from trainlint.readers.shell.positions import LineIndex
from trainlint.readers.shell.recovery import Mask, ParsedScript, error_nodes
from trainlint.readers.shell.syntax import shorten
from trainlint.readers.shell.values import Doc, Node, Span
from trainlint.readers.source import SourceText

_MASK_EFFECT = {
    "expansion": "its value is unknown",
    "here-doc": "the here-doc is skipped",
    "backslash": "the command ends at the end of the file",
    "escaped": "the test it is part of is not evaluated",
}


def _continues_into_the_end(parsed: ParsedScript, mask: Mask) -> bool:
    """A `\\` on the last line that continues it into the end of the file (qlora's and verl's launchers): bash drops it
    and ends the command, just as the space that masks it does. One before a space or a carriage return escapes that
    character instead, an argument the mask would lose."""
    return mask.what == "backslash" and parsed.data[mask.span[1]:mask.span[1] + 1] in (b"", b"\n")


class ReaderBase:
    """State of one reading; every concern of the reader is a mixin over it."""

    def __init__(self, source: SourceText) -> None:
        self.source = source
        self.lines = LineIndex(source.path, source.data)
        self.diagnostics: List[Diagnostic] = []
        self.flows: List[Flow] = []
        self.launches: List[Launch] = []
        self.calls: List[ScriptCall] = []  # other scripts run with arguments
        self.called_functions: set = set()
        self.reported_continuations: set = set()
        self.masked_expansions: set = set()  # spans of `${...}` tree-sitter could not parse
        self.nesting = 0  # statements being interpreted inside one another
        self.function_calls = 0  # every call followed so far, against MAX_FUNCTION_CALLS
        self.evals = 0  # every eval read so far, against evaluated.MAX_EVALS

    def _origin(self, span: Span) -> Origin:
        return self.lines.origin(span[0], span[1])

    def _node_span(self, doc: Doc, node: Node) -> Span:
        return doc.span(node.start_byte, node.end_byte)

    def _outer_text(self, span: Span) -> str:
        return self.source.data[span[0] : span[1]].decode("utf-8", errors="replace")

    def _report_parse_problems(self, parsed: ParsedScript, doc: Doc) -> None:
        """A syntax error only where bash rejects the file; what only tree-sitter fails on is unmodelled."""
        error = parsed.verdict.error
        if error is not None:
            origin = self._origin(doc.span(error.offset, error.offset + 1))
            message = (
                f"bash syntax error at line {origin.line}, column {origin.column}: {error.message}; "
                "the rest was read as far as it parsed"
            )
            self.diagnostics.append(Diagnostic(DiagnosticKind.SYNTAX_ERROR, message, self.source.path, origin))
            return
        for mask in parsed.masks:
            if mask.what == "blank" or _continues_into_the_end(parsed, mask):
                continue  # read exactly as bash reads it: nothing is left unknown
            span = doc.span(*mask.span)
            text = shorten(self._outer_text(span), 40)
            self._unmodelled(f"tree-sitter-bash cannot parse `{text}`, which bash accepts; "
                             f"{_MASK_EFFECT[mask.what]}", span)
        for node in error_nodes(doc.root):
            span = self._node_span(doc, node)
            if node.is_missing:
                what = f"a missing `{node.type}` here"
            else:
                what = f"`{shorten(self._outer_text(span), 40)}`" if span[1] > span[0] else "the end of the file"
            self._unmodelled(f"tree-sitter-bash cannot parse {what}, which bash accepts; values it touches are "
                             "unknown and the rest was read as far as it parsed", span)

    def _unmodelled(self, message: str, span: Span) -> None:
        origin = self._origin(span)
        diagnostic = Diagnostic(DiagnosticKind.UNMODELLED_CONSTRUCT, message, self.source.path, origin)
        if diagnostic not in self.diagnostics:
            self.diagnostics.append(diagnostic)
