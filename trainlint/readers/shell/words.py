"""Words: quoting, concatenation and word splitting of a command's arguments after expansion."""

from __future__ import annotations

from typing import List, Optional, Sequence, Union

from trainlint.core import Setting, SourceKind, Unknown
from trainlint.readers.shell.base import ReaderBase
from trainlint.readers.shell.syntax import EXPANSION_TYPES, effective_start, iter_chars, literal, node_text
from trainlint.readers.shell.values import (
    Ctx,
    Doc,
    Node,
    Piece,
    Span,
    State,
    Word,
    exceeds_bounds,
    oversized,
    unique,
    value_of,
)

IFS_WHITESPACE = " \t\n\r"


def split_fields(pieces: Sequence[Piece]) -> List[List[Piece]]:
    """Word splitting: only the unquoted results of expansions split, at IFS whitespace."""
    fields: List[List[Piece]] = []
    current: List[Piece] = []
    started = False
    for piece in pieces:
        if piece.field_break and started:
            fields.append(current)
            current, started = [], False
        if piece.unknown is not None or piece.positional or not piece.splittable:
            current.append(piece)
            started = True
            continue
        run_start: Optional[int] = None
        for index, char in enumerate(piece.text):
            if char in IFS_WHITESPACE:
                if run_start is not None:
                    current.append(piece.slice(run_start, index))
                    run_start = None
                if started:
                    fields.append(current)
                    current, started = [], False
            elif run_start is None:
                run_start, started = index, True
        if run_start is not None:
            current.append(piece.slice(run_start, len(piece.text)))
    if started:
        fields.append(current)
    return fields


class WordsMixin(ReaderBase):
    """Turns argument nodes into words: quote removal, expansion and splitting, with origins."""

    def _words(self, nodes: Union[Node, Sequence[Node]], ctx: Ctx, state: State, kind: SourceKind) -> List[Word]:
        """The words an argument (one node, or adjacent nodes) becomes after expansion and splitting."""
        group = (nodes,) if isinstance(nodes, Node) else tuple(nodes)
        pieces = self._group_pieces(group, ctx, state, False)
        fields = split_fields(pieces)
        node_span = ctx.doc.span(group[0].start_byte, group[-1].end_byte)
        node_origin = self._origin(node_span)
        node_text = self._outer_text(node_span)
        kept = [f for f in fields if not all(p.positional for p in f)]
        passthrough_only = len(kept) < len(fields)
        words: List[Word] = []
        for field_pieces in kept:
            origin, text, via = node_origin, node_text, unique([s for p in field_pieces for s in p.via])
            if len(kept) > 1 or any(p.field_break for p in field_pieces[1:]):
                regions = {p.region for p in field_pieces}
                if len(regions) == 1 and None not in regions:
                    starts = [span[0] for p in field_pieces for span in p.spans] + [
                        p.unknown_span[0] for p in field_pieces if p.unknown is not None
                    ]
                    ends = [span[1] for p in field_pieces for span in p.spans] + [
                        p.unknown_span[1] for p in field_pieces if p.unknown is not None
                    ]
                    if starts:
                        span = (min(starts), max(ends))
                        origin, text = self._origin(span), self._outer_text(span)
                        via = unique([s for p in field_pieces for s in p.inner_via])
            setting = Setting(value_of(field_pieces), kind, origin, text, via)
            unmodelled = tuple(p.unknown.reason for p in field_pieces if p.unmodelled and p.unknown is not None)
            words.append(
                Word(setting, tuple(field_pieces), group, any(p.positional for p in field_pieces), unmodelled)
            )
        if passthrough_only:
            marker = Setting(Unknown("the script's arguments ($@) are passed through"), kind, node_origin, node_text)
            words.append(Word(marker, (), group, True))
        return words

    def _pieces(self, node: Node, ctx: Ctx, state: State, in_dquote: bool) -> List[Piece]:
        kind = node.type
        doc = ctx.doc
        if kind == "raw_string":
            return self._quoted_empty(literal(doc, node.start_byte + 1, node.end_byte - 1, "raw"), doc, node)
        if kind == "string":
            return self._quoted_empty(self._string(node, ctx, state), doc, node)
        if kind == "translated_string":
            inner = [child for child in node.named_children if child.type == "string"]
            return self._pieces(inner[0], ctx, state, in_dquote) if inner else []
        if kind == "ansi_c_string":
            return self._quoted_empty(self._ansi_c(node, doc), doc, node)
        if kind == "concatenation":
            return self._group_pieces([node], ctx, state, in_dquote)
        if kind == "simple_expansion":
            return self._simple_expansion(node, ctx, state, in_dquote)
        if kind == "expansion":
            return self._expansion(node, ctx, state, in_dquote)
        if kind in ("command_substitution", "process_substitution"):
            return self._command_substitution(node, ctx, state, in_dquote)
        if kind == "arithmetic_expansion":
            return self._arithmetic_expansion(node, ctx, state, in_dquote)
        if kind == "brace_expression":
            span = self._node_span(doc, node)
            reason = Unknown(f"brace expansion `{node_text(doc, node)}`")
            return [Piece(unknown=reason, unknown_span=span, region=span, unmodelled=True)]
        return literal(doc, node.start_byte, node.end_byte, "dquote" if in_dquote else "word")

    def _group_pieces(self, nodes: Sequence[Node], ctx: Ctx, state: State, in_dquote: bool) -> List[Piece]:
        """Pieces of adjacent nodes, repairing a tree-sitter-bash quirk: in `a/$X/$Y/b` it ends one
        node with a bare `$` token and starts the next with `Y/b`; that `$` still expands `$Y`."""
        items: List[Node] = []
        for node in nodes:
            items.extend(node.children if node.type == "concatenation" else [node])
        doc = ctx.doc
        out: List[Piece] = []
        index = 0
        while index < len(items):
            item = items[index]
            following = items[index + 1] if index + 1 < len(items) else None
            if (
                item.type == "$"
                and not item.is_named
                and following is not None
                and following.start_byte == item.end_byte
                and following.type in ("word", "number")
            ):
                text = doc.data[following.start_byte : following.end_byte]
                length = 0
                while length < len(text) and (chr(text[length]).isalnum() or text[length : length + 1] == b"_"):
                    length += 1
                if length:
                    name = text[:length].decode("ascii", errors="replace")
                    span = doc.span(item.start_byte, following.start_byte + length)
                    binding, explained = self._lookup(name, span, state, in_dquote, name)
                    if binding is not None and not binding.is_unset:
                        out.extend(self._use_pieces(binding, span, in_dquote))
                    else:
                        out.extend(explained)
                    out.extend(
                        literal(
                            doc, following.start_byte + length, following.end_byte, "dquote" if in_dquote else "word"
                        )
                    )
                    index += 2
                    continue
            out.extend(self._pieces(item, ctx, state, in_dquote))
            index += 1
        if exceeds_bounds(out):
            # A word of many uses of one long value (`$V$V$V...`): as long as the file allows, times the value.
            return [oversized(doc.span(items[0].start_byte, items[-1].end_byte))]
        return out

    def _quoted_empty(self, pieces: List[Piece], doc: Doc, node: Node) -> List[Piece]:
        # A quoted empty string is still a word: keep a zero-length piece so splitting sees it.
        if pieces:
            return pieces
        return [Piece(text="", spans=())]

    def _string(self, node: Node, ctx: Ctx, state: State) -> List[Piece]:
        doc = ctx.doc
        out: List[Piece] = []
        cursor = node.start_byte + 1
        end = node.end_byte - 1 if node.end_byte - node.start_byte >= 2 else node.end_byte
        for child in node.children:
            if child.type not in EXPANSION_TYPES:
                continue
            start = effective_start(doc, child)
            if start > cursor:
                out.extend(literal(doc, cursor, start, "dquote"))
            out.extend(self._pieces(child, ctx, state, in_dquote=True))
            cursor = max(cursor, child.end_byte)
        if end > cursor:
            out.extend(literal(doc, cursor, end, "dquote"))
        return out

    def _ansi_c(self, node: Node, doc: Doc) -> List[Piece]:
        escapes = {
            "n": "\n",
            "t": "\t",
            "r": "\r",
            "\\": "\\",
            "'": "'",
            '"': '"',
            "a": "\a",
            "b": "\b",
            "e": "\x1b",
            "f": "\f",
            "v": "\v",
        }
        chars: List[str] = []
        spans: List[Span] = []
        items = list(iter_chars(doc.data, node.start_byte + 2, node.end_byte - 1))
        index = 0
        while index < len(items):
            char, start, end = items[index]
            if char == "\\" and index + 1 < len(items) and items[index + 1][0] in escapes:
                chars.append(escapes[items[index + 1][0]])
                spans.append(doc.span(start, items[index + 1][2]))
                index += 2
                continue
            chars.append(char)
            spans.append(doc.span(start, end))
            index += 1
        return [Piece("".join(chars), tuple(spans))] if chars else []
