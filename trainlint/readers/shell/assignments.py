"""Assignments and declarations: `X=...`, `X+=...`, arrays, `export`, `local`, `declare`, `unset`."""

from __future__ import annotations

from dataclasses import replace
from typing import List, Optional, Sequence, Tuple

from trainlint.core import Setting, SourceKind, Unknown, Value
from trainlint.readers.shell.base import ReaderBase
from trainlint.readers.shell.syntax import adjacent_groups, node_text
from trainlint.readers.shell.values import (
    Binding,
    Ctx,
    Element,
    Node,
    Piece,
    Span,
    State,
    exceeds_bounds,
    oversized,
    store,
    unique,
    value_of,
)

_SPLIT_EXPANSIONS = ("expansion", "simple_expansion", "command_substitution")


class AssignmentsMixin(ReaderBase):
    """Binds variables to the pieces they are assigned, each piece keeping where it was written."""

    def _assign(
        self,
        node: Node,
        ctx: Ctx,
        state: State,
        exported: Optional[bool] = None,
        local: bool = False,
        extra: Sequence[Node] = (),
    ) -> Optional[Tuple[str, Binding]]:
        name_node = node.child_by_field_name("name")
        value_node = node.child_by_field_name("value")
        if name_node is None:
            return None
        is_element = name_node.type == "subscript"
        if is_element:
            base = name_node.child_by_field_name("name")
            name = node_text(ctx.doc, base) if base is not None else node_text(ctx.doc, name_node)
        else:
            name = node_text(ctx.doc, name_node)
        appending = any(child.type == "+=" for child in node.children)
        if value_node is None:
            equals_end = max(
                (child.end_byte for child in node.children if child.type in ("=", "+=")), default=node.end_byte
            )
            span = ctx.doc.span(equals_end, equals_end)
        else:
            last = extra[-1] if extra else value_node
            span = ctx.doc.span(value_node.start_byte, last.end_byte)
        previous = state.env.get(name)
        if local and state.local_frames and name not in state.local_frames[-1]:
            state.local_frames[-1][name] = previous
        keep_exported = previous.exported if previous is not None and not previous.hidden else False
        is_exported = keep_exported if exported is None else exported
        if value_node is not None and value_node.type == "array":
            binding = self._array_binding(value_node, span, ctx, state, is_exported)
        else:
            pieces = self._group_pieces([value_node, *extra], ctx, state, True) if value_node is not None else []
            stored = store(pieces, span)
            via: Tuple[Setting, ...] = unique([s for piece in stored for s in piece.via])
            if appending and previous is not None and previous.elements is None and not previous.hidden:
                stored = tuple(previous.pieces) + stored
                via = unique(list(previous.settings) + list(via))
                if exceeds_bounds(stored):
                    stored = (oversized(span),)
            if is_element:
                reason = Unknown(f"${name} has an array element assigned at line {self._origin(span).line}")
                stored = (Piece(unknown=reason, unknown_span=span, unmodelled=True),)
            setting = Setting(
                value_of(stored), SourceKind.SHELL_VARIABLE, self._origin(span), self._outer_text(span), via
            )
            binding = Binding(stored, (setting,), is_exported)
        state.env[name] = binding
        return name, binding

    def _array_binding(self, node: Node, span: Span, ctx: Ctx, state: State, exported: bool) -> Binding:
        elements: List[Element] = []
        children = [child for child in node.named_children if child.type != "comment"]
        for group in adjacent_groups(children):
            # An expansion written outside quotes is split into words by bash.
            unquoted = any(child.type in _SPLIT_EXPANSIONS for child in group)
            for word in self._words(group, ctx, state, SourceKind.SHELL_VARIABLE):
                word_span = (
                    (word.setting.origin.start_byte, word.setting.origin.end_byte)
                    if word.setting.origin is not None
                    else span
                )
                may_split = unquoted and any(piece.unknown is not None for piece in word.pieces)
                elements.append(Element(store(list(word.pieces), word_span), word.setting, may_split))
        if exceeds_bounds([piece for element in elements for piece in element.pieces]):
            # Counted over the stored pieces: `A=("${A[@]}" "${A[@]}")` doubles the elements as `V=$V$V` does text.
            piece = oversized(span)
            setting = Setting(piece.unknown, SourceKind.SHELL_VARIABLE, self._origin(span), self._outer_text(span))
            return Binding((piece,), (setting,), exported, elements=(Element((piece,), setting, may_split=True),))
        joined: Value = " ".join(e.setting.value for e in elements if isinstance(e.setting.value, str))
        if any(not isinstance(e.setting.value, str) for e in elements):
            joined = Unknown("an array with unknown elements")
        setting = Setting(
            joined,
            SourceKind.SHELL_VARIABLE,
            self._origin(span),
            self._outer_text(span),
            unique([e.setting for e in elements]),
        )
        first = elements[0].pieces if elements else ()
        return Binding(first, (setting,), exported, elements=tuple(elements))

    def _declare(self, node: Node, ctx: Ctx, state: State) -> None:
        keyword = node.children[0].type if node.children else ""
        options = ""
        for child in node.named_children:
            text = node_text(ctx.doc, child)
            if child.type == "word" and text[:1] in "-+":
                options += text
        if "f" in options.lstrip("-+"):
            return
        exported: Optional[bool] = None
        if keyword == "export":
            exported = "n" not in options
        elif "x" in options:
            exported = True
        local = keyword == "local" or (
            keyword in ("declare", "typeset") and bool(state.local_frames) and "g" not in options
        )
        for child in node.named_children:
            if child.type == "variable_assignment":
                self._assign(child, ctx, state, exported=exported, local=local)
            elif child.type == "variable_name":
                name = node_text(ctx.doc, child)
                previous = state.env.get(name)
                if local and state.local_frames and name not in state.local_frames[-1]:
                    state.local_frames[-1][name] = previous
                if previous is not None and not previous.hidden and exported is not None:
                    state.env[name] = replace(previous, exported=exported)
                elif local or (keyword in ("declare", "typeset") and previous is None):
                    state.env[name] = Binding((), (), bool(exported), is_unset=True)
            else:
                self._scan(child, ctx, state)

    def _unset(self, node: Node, ctx: Ctx, state: State) -> None:
        texts = [node_text(ctx.doc, child) for child in node.named_children]
        if any(text.startswith("-") and "f" in text for text in texts):
            for text in texts:
                state.functions.pop(text, None)
            return
        for child, text in zip(node.named_children, texts):
            if child.type in ("variable_name", "word") and not text.startswith("-"):
                state.env[text] = Binding((), (), False, is_unset=True)
