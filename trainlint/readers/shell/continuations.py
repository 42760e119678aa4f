"""Broken line continuations: a `\\` followed by a space or a comment ends the launch command early."""

from __future__ import annotations

from typing import Optional, Tuple

from trainlint.core import Diagnostic, DiagnosticKind
from trainlint.readers.shell.base import ReaderBase
from trainlint.readers.shell.syntax import node_text, shorten
from trainlint.readers.shell.values import Ctx, Doc, Node


def broken_backslash(doc: Doc, node: Node, end: int) -> Optional[Tuple[int, int, int, bool]]:
    """(backslash, content end, line end, has comment) when the line ends in `\\ ` or `\\ # ...`."""
    data = doc.data
    line_end = data.find(b"\n", end)
    line_end = len(data) if line_end < 0 else line_end
    content_end = line_end - 1 if line_end > end and data[line_end - 1 : line_end] == b"\r" else line_end
    tail = data[end:content_end]
    stripped = tail.lstrip(b" \t")
    offset = end + len(tail) - len(stripped)
    if stripped[:1] == b"\\" and stripped[1:2] in (b" ", b"\t"):
        rest = stripped[2:].lstrip(b" \t")
        if rest == b"" or rest.startswith(b"#"):
            return offset, content_end, line_end, rest.startswith(b"#")
        return None
    if stripped and not stripped.startswith(b"#"):
        return None
    if end - node.start_byte >= 2 and data[end - 2 : end - 1] == b"\\" and data[end - 1 : end] in (b" ", b"\t"):
        backslashes = 0
        position = end - 2
        while position >= node.start_byte and data[position : position + 1] == b"\\":
            backslashes += 1
            position -= 1
        if backslashes % 2 == 1:
            return end - 2, content_end, line_end, stripped.startswith(b"#")
    return None


def continued_into_comment(doc: Doc, end: int) -> Optional[Tuple[int, int, int, bool]]:
    """(backslash, end of the last comment, end of its line, True) when the line ends in a `\\` that continues it
    into lines holding only comments: bash drops the backslash and the newline, the `#` then starts a comment
    where a word could begin, and the command ends there."""
    data = doc.data
    line_end = data.find(b"\n", end)
    if line_end < 0:
        return None
    content_end = line_end - 1 if data[line_end - 1 : line_end] == b"\r" else line_end
    tail = data[end:content_end]
    if tail.lstrip(b" \t") != b"\\":
        return None
    backslash = content_end - 1
    found = None
    start = line_end + 1
    while start < len(data):
        next_end = data.find(b"\n", start)
        next_end = len(data) if next_end < 0 else next_end
        next_content_end = next_end - 1 if data[next_end - 1 : next_end] == b"\r" else next_end
        following = data[start:next_content_end]
        if not following.lstrip(b" \t").startswith(b"#"):
            break
        if found is None and tail[:1] not in (b" ", b"\t") and following[:1] not in (b" ", b"\t"):
            return None  # `word\\` joined to `#x` makes `word#x` one word, no comment
        found = (backslash, next_content_end, next_end, True)
        start = next_end + 1
    return found


def cut_off_argument(word: Optional[str]) -> bool:
    """Whether the first word of a line reads as an argument of the command above it (`--output_dir`,
    `+trainer.x=1`, `data.batch_size=8`) rather than a command of its own (`echo`, `python`)."""
    return word is not None and (word[:1] in ("-", "+") or "=" in word)


def orphan_word(doc: Doc, line_end: int) -> Optional[str]:
    """The first word of the next line when that line holds a command the break cut off."""
    node = orphan_command(doc, line_end)
    if node is None:
        return None
    first = node.named_children[0] if node.named_children else None
    if first is not None and first.type == "variable_assignment":
        first = next((c for c in node.named_children if c.type == "command_name"), first)
    return shorten(node_text(doc, first), 40) if first is not None else None


def later_breaks(doc: Doc, line_end: int) -> Tuple[Tuple[int, int], ...]:
    """The spans of the breaks after the one ending at `line_end` that cut the same command again: MiniCPM's
    launcher puts a comment line above each flag, so each flag line the first break orphans ends in a `\\` into the
    next comment. Each is a (backslash, content end) span, as the first break's."""
    spans = []
    for _ in range(_MAX_LATER_BREAKS):
        node = orphan_command(doc, line_end)
        if node is None or not cut_off_argument(orphan_word(doc, line_end)):
            break
        found = broken_backslash(doc, node, node.end_byte) or continued_into_comment(doc, node.end_byte)
        if found is None or not cut_off_argument(orphan_word(doc, found[2])):
            break
        spans.append((found[0], found[1]))
        line_end = found[2]
    return tuple(spans)


# A command cut into more pieces than this is repaired in further rounds of `trainlint fix`.
_MAX_LATER_BREAKS = 200


def orphan_command(doc: Doc, line_end: int) -> Optional[Node]:
    """The command the next line starts, when it starts one."""
    if line_end >= len(doc.data):
        return None
    start = line_end + 1
    next_end = doc.data.find(b"\n", start)
    next_end = len(doc.data) if next_end < 0 else next_end
    first_char = start
    while first_char < next_end and doc.data[first_char : first_char + 1] in (b" ", b"\t", b"\r"):
        first_char += 1
    if first_char >= next_end:
        return None
    node = doc.root.named_descendant_for_byte_range(first_char, first_char + 1)
    while node is not None and node.type not in ("command", "program"):
        node = node.parent
    if node is None or node.type != "command" or node.start_byte != first_char:
        return None
    return node


class ContinuationsMixin(ReaderBase):
    """Reports a launch command cut short by a `\\` that escapes a space instead of the newline."""

    def _check_continuation(self, node: Node, ctx: Ctx, launcher: str) -> None:
        ends = [node.end_byte]
        parent = node.parent
        while parent is not None and parent.type in ("redirected_statement", "pipeline"):
            ends.append(parent.end_byte)
            parent = parent.parent
        for end in ends:
            found = broken_backslash(ctx.doc, node, end)
            if found is not None:
                self._report_continuation(ctx.doc, found, launcher)
                return
        found = continued_into_comment(ctx.doc, ends[-1])
        # Comment lines that end the command lose nothing (a flag commented out last); arguments after them do.
        if found is not None and cut_off_argument(orphan_word(ctx.doc, found[2])):
            self._report_continuation(ctx.doc, found, launcher, into_comment=True)

    def _report_continuation(self, doc: Doc, found: Tuple[int, int, int, bool], launcher: str,
                             into_comment: bool = False) -> None:
        backslash, content_end, line_end, has_comment = found
        span = doc.span(backslash, content_end)
        if span in self.reported_continuations:
            return
        self.reported_continuations.add(span)
        origin = self._origin(span)
        orphan = orphan_word(doc, line_end)
        what = "a comment" if has_comment else "trailing whitespace"
        message = (
            f"the `\\` at line {origin.line} is followed by {what}, so it escapes a space instead of "
            f"continuing the line: the {launcher} command ends here"
        )
        if into_comment:
            message = (
                f"the `\\` at line {origin.line} continues the line into a line holding only a comment, which "
                f"bash reads as a comment of the command: the {launcher} command ends here"
            )
        if orphan:
            message += (
                f", and the following lines (starting with `{orphan}`) never reach it; they run as a separate command"
            )
        else:
            message += " and receives a stray ' ' argument; any flag added below it would be silently dropped"
        later = later_breaks(doc, line_end) if orphan else ()
        also_at = tuple(self._origin(doc.span(start, end)) for start, end in later)
        if also_at:
            message += f" (and {len(also_at)} more time{'s' if len(also_at) > 1 else ''} below, each repaired with it)"
        self.diagnostics.append(Diagnostic(DiagnosticKind.BROKEN_LINE_CONTINUATION, message, self.source.path, origin,
                                           also_at))
