"""What a command reads on its standard input when the script writes it: a here-doc or a here-string.

A here-doc body is lexed from its bytes as bash reads it (tree-sitter-bash misreads a body that starts with
`\\$`): with an unquoted delimiter, backslash-newline is removed, `\\$`, `\\``, `\\\\` stand for the character,
and expansions happen; quotes are ordinary characters. With a quoted delimiter nothing is changed. `<<-`
strips the leading tabs of every line. Each character keeps the byte it was written at."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import List, Optional, Sequence, Tuple

from trainlint.readers.shell.base import ReaderBase
from trainlint.readers.shell.certainty import expansion_end
from trainlint.readers.shell.syntax import EXPANSION_TYPES, iter_chars, parse, shorten
from trainlint.readers.shell.values import Ctx, Doc, Node, Piece, Span, State

STDIN_REDIRECTS = ("heredoc_redirect", "herestring_redirect", "file_redirect")
_SPECIAL_PARAMETERS = b"@*#?$!-_"
# Stands for a backslash-newline of an unquoted body until the lines are joined (after `<<-` strips tabs).
_CONTINUATION = Piece("\\\n")


@dataclass(frozen=True)
class StandardInput:
    """The text a command reads, or why it is not known (`pieces` is None then)."""

    pieces: Optional[Tuple[Piece, ...]]
    reason: str = ""


def _expansion_end(data: bytes, position: int, end: int) -> Optional[int]:
    """Where the `$...` or backquoted expansion starting at `position` ends, or None when it is not one."""
    following = data[position + 1 : position + 2]
    if data[position : position + 1] == b"`" or following in (b"(", b"{"):
        return expansion_end(data, position, end)
    if following[:1].isalpha() or following == b"_":
        index = position + 1
        while index < end and (data[index : index + 1].isalnum() or data[index : index + 1] == b"_"):
            index += 1
        return index
    if following[:1].isdigit() or (following and following in _SPECIAL_PARAMETERS):
        return position + 2
    return None


class HeredocsMixin(ReaderBase):
    """Reads the standard input a script writes for a command: here-docs and here-strings."""

    def _standard_input(self, redirects: Sequence[Node], ctx: Ctx, state: State) -> Optional[StandardInput]:
        """What the last redirect of standard input gives, or None when the command reads the script's own."""
        chosen: Optional[Node] = None
        for node in sorted(redirects, key=lambda node: node.start_byte):
            if node.type in ("heredoc_redirect", "herestring_redirect") or self._redirects_stdin(node, ctx):
                chosen = node
        if chosen is None:
            return None
        if chosen.type == "herestring_redirect":
            return self._herestring(chosen, ctx, state)
        if chosen.type == "heredoc_redirect":
            return self._heredoc(chosen, ctx, state)
        text = shorten(ctx.doc.data[chosen.start_byte : chosen.end_byte].decode("utf-8", errors="replace"), 40)
        return StandardInput(None, f"from the redirect `{text}`, whose content is not read")

    def _redirects_stdin(self, node: Node, ctx: Ctx) -> bool:
        if node.type != "file_redirect":
            return False
        descriptor = node.child_by_field_name("descriptor")
        if descriptor is not None and ctx.doc.data[descriptor.start_byte : descriptor.end_byte] != b"0":
            return False
        return any(child.type in ("<", "<&", "<>", "<&-") for child in node.children)

    def _herestring(self, node: Node, ctx: Ctx, state: State) -> StandardInput:
        words = [child for child in node.named_children if child.type != "comment"]
        pieces = self._group_pieces(words, ctx, state, False) if words else []
        # No word splitting in a here-string; bash adds a newline at its end.
        pieces = [replace(piece, splittable=False, field_break=False) for piece in pieces]
        end = ctx.doc.span(node.end_byte, node.end_byte)
        pieces.append(Piece("\n", (end,)))
        return StandardInput(tuple(pieces))

    def _heredoc(self, node: Node, ctx: Ctx, state: State) -> StandardInput:
        data = ctx.doc.data
        start_node = next((child for child in node.children if child.type == "heredoc_start"), None)
        end_node = next((child for child in node.children if child.type == "heredoc_end"), None)
        operator = next((child.type for child in node.children if not child.is_named), "<<")
        if start_node is None or end_node is None:
            return StandardInput(None, "from a here-doc that is not terminated")
        delimiter = data[start_node.start_byte : start_node.end_byte]
        quoted = any(char in delimiter for char in b"'\"\\")
        body_start = data.find(b"\n", start_node.end_byte, end_node.start_byte)
        body_end = data.rfind(b"\n", 0, end_node.start_byte) + 1
        if body_start < 0 or body_end <= body_start:
            return StandardInput((), "")
        body_start += 1
        lines: List[Tuple[int, int]] = []
        position = body_start
        continued = False  # the previous line ended in a backslash-newline: bash joined them before `<<-`
        while position < body_end:
            line_end = data.find(b"\n", position, body_end)
            line_end = body_end if line_end < 0 else line_end + 1
            line_start = position
            if operator == "<<-" and not continued:
                while line_start < line_end and data[line_start : line_start + 1] == b"\t":
                    line_start += 1
            lines.append((line_start, line_end))
            text = data[line_start:line_end].rstrip(b"\n").rstrip(b"\r")
            continued = not quoted and (len(text) - len(text.rstrip(b"\\"))) % 2 == 1
            position = line_end
        pieces: List[Piece] = []
        for line_start, line_end in lines:
            if quoted:
                pieces.extend(self._heredoc_text(ctx.doc, line_start, line_end))
            else:
                pieces.extend(self._heredoc_line(line_start, line_end, ctx, state))
        if not quoted:
            pieces = self._join_continued_lines(pieces)
        return StandardInput(tuple(pieces))

    def _heredoc_text(self, doc: Doc, start: int, end: int) -> List[Piece]:
        chars: List[str] = []
        spans: List[Span] = []
        for char, char_start, char_end in iter_chars(doc.data, start, end):
            chars.append(char)
            spans.append(doc.span(char_start, char_end))
        return [Piece("".join(chars), tuple(spans))] if chars else []

    def _heredoc_line(self, start: int, end: int, ctx: Ctx, state: State) -> List[Piece]:
        """One line of an unquoted body: escapes and expansions (a backslash-newline is kept as a marker
        piece here, and joined afterwards: `<<-` strips the tabs of the next line first)."""
        data = ctx.doc.data
        out: List[Piece] = []
        cursor = start
        index = start
        while index < end:
            char = data[index : index + 1]
            if char == b"\\" and data[index + 1 : index + 3] == b"\r\n":
                # A CRLF file: the continuation is read as the rest of the reader reads it.
                out.extend(self._heredoc_text(ctx.doc, cursor, index))
                out.append(_CONTINUATION)
                index = cursor = index + 3
                continue
            if char == b"\\" and index + 1 < end and data[index + 1 : index + 2] in (b"$", b"`", b"\\", b"\n"):
                out.extend(self._heredoc_text(ctx.doc, cursor, index))
                escaped = data[index + 1 : index + 2]
                if escaped == b"\n":
                    out.append(_CONTINUATION)
                else:
                    out.append(Piece(escaped.decode("ascii"), (ctx.doc.span(index, index + 2),)))
                index += 2
                cursor = index
                continue
            if char in (b"$", b"`"):
                expansion_end = _expansion_end(data, index, end)
                if expansion_end is None and (data[index : index + 2] in (b"$(", b"${") or char == b"`"):
                    out.extend(self._heredoc_text(ctx.doc, cursor, index))
                    span = ctx.doc.span(index, end)
                    token = shorten(self._outer_text(span), 40)
                    out.extend(self._unmodelled_piece(f"`{token}` in a here-doc goes on over several lines, "
                                                      "which is not read", span))
                    return out
                if expansion_end is not None:
                    out.extend(self._heredoc_text(ctx.doc, cursor, index))
                    out.extend(self._heredoc_expansion(index, expansion_end, ctx, state))
                    index = cursor = expansion_end
                    continue
            index += 1
        out.extend(self._heredoc_text(ctx.doc, cursor, end))
        return out

    @staticmethod
    def _join_continued_lines(pieces: List[Piece]) -> List[Piece]:
        return [piece for piece in pieces if piece is not _CONTINUATION]

    def _heredoc_expansion(self, start: int, end: int, ctx: Ctx, state: State) -> List[Piece]:
        """An expansion in a here-doc body, parsed on its own and read as if it were inside double quotes."""
        doc = ctx.doc
        snippet = doc.data[start:end]
        starts = tuple(doc.span(start + offset, start + offset + 1)[0] for offset in range(len(snippet)))
        ends = tuple(doc.span(start + offset, start + offset + 1)[1] for offset in range(len(snippet)))
        tree = parse(snippet)
        node = self._whole_expansion(tree.root_node, len(snippet))
        span = doc.span(start, end)
        if node is None:
            token = shorten(self._outer_text(span), 40)
            return self._unmodelled_piece(f"`{token}` in a here-doc is not read", span)
        inner = Doc(snippet, tree.root_node, starts, ends)
        return self._pieces(node, replace(ctx, doc=inner), state, in_dquote=True)

    @staticmethod
    def _whole_expansion(root: Node, size: int) -> Optional[Node]:
        stack = [root]
        while stack:
            node = stack.pop()
            if node.type in EXPANSION_TYPES:
                return node if node.start_byte == 0 and node.end_byte == size and not node.has_error else None
            if node.type == "ERROR":
                return None
            stack.extend(reversed(node.children))
        return None

