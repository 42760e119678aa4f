"""Parameter expansion: `$X`, `${X:-default}`, `${X%pattern}`, `${X:1:2}`, arrays, `$(...)`."""

from __future__ import annotations

import fnmatch
from dataclasses import replace
from typing import List, Optional, Sequence, Tuple

from trainlint.core import Fallback, ReplacedBy, Setting, SourceKind, Unknown
from trainlint.readers.facts import Flow
from trainlint.readers.shell.arguments import given_argument, given_arguments
from trainlint.readers.shell.base import ReaderBase
from trainlint.readers.shell.syntax import EXPANSION_TYPES, effective_start, literal, node_text, shorten
from trainlint.readers.shell.values import (
    Binding,
    Ctx,
    Element,
    Node,
    Piece,
    Span,
    State,
    computed,
    store,
    unique,
    value_of,
)

_GLOB_OR_QUOTE = frozenset("*?[]'\"$`(){}")


def _unescape(text: str) -> Optional[str]:
    """A backslash-escaped literal (`\\/` is `/`), or None when it holds a wildcard, quote or expansion."""
    out: List[str] = []
    escaped = False
    for char in text:
        if escaped:
            out.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char in _GLOB_OR_QUOTE:
            return None
        else:
            out.append(char)
    return None if escaped else "".join(out)


def _literal_substitution(written: str) -> Optional[Tuple[str, str, str, bool]]:
    """(anchor, pattern, replacement, every) of a `${X/pattern/string}` operator written as `written` (from the
    first `/`), when the pattern is a literal bash would match as such and the string is plain text; None
    otherwise. The anchor is `#` (a prefix), `%` (a suffix) or empty."""
    every = written.startswith("//")
    rest = written[2:] if every else written[1:]
    anchor = ""
    if not every and rest[:1] in ("#", "%"):
        anchor, rest = rest[0], rest[1:]
    index, escaped = 0, False
    while index < len(rest):  # the pattern ends at the first unescaped `/`
        if escaped:
            escaped = False
        elif rest[index] == "\\":
            escaped = True
        elif rest[index] == "/":
            break
        index += 1
    pattern, replacement = _unescape(rest[:index]), rest[index + 1:]
    # `&` stands for the match (bash 5.2's patsub_replacement); a backslash or `~` is read specially too.
    if not pattern or any(char in _GLOB_OR_QUOTE or char in "&\\~" for char in replacement):
        return None
    return anchor, pattern, replacement, every


class ExpansionMixin(ReaderBase):
    """Expands `$...` at a use site, recording a flow from each assignment it reads."""

    def _use_pieces(
        self,
        binding: Binding,
        span: Span,
        in_dquote: bool,
        pieces: Optional[Sequence[Piece]] = None,
        via: Optional[Tuple[Setting, ...]] = None,
    ) -> List[Piece]:
        """The stored pieces of a binding as they appear at a use site."""
        use_via = binding.settings if via is None else via
        out = [
            Piece(piece.text, piece.spans, use_via, piece.via, piece.unknown,
                  piece.unknown_span if piece.unknown_span != (0, 0) else span, not in_dquote, span,
                  piece.unmodelled, piece.positional, piece.field_break, piece.script_argument)
            for piece in (binding.pieces if pieces is None else pieces)
        ]
        if in_dquote and not out:
            out = [Piece(via=use_via, region=span)]
        return out

    def _record_flows(self, binding: Binding, span: Span) -> None:
        target = self._origin(span)
        for setting in binding.settings:
            if setting.origin is not None:
                self.flows.append(Flow(setting.origin, target))

    def _lookup(
        self, name: str, span: Span, state: State, in_dquote: bool, token: str
    ) -> Tuple[Optional[Binding], List[Piece]]:
        """The binding of `name` (recording a flow) or the pieces explaining why it has none."""

        def unknown(reason: str, unmodelled: bool = False, argument: bool = False) -> List[Piece]:
            return [Piece(unknown=Unknown(reason), unknown_span=span, region=span, unmodelled=unmodelled,
                           script_argument=argument)]

        if name in ("@", "*"):
            if state.arguments is not None and state.arguments.complete and (name == "@" or not in_dquote):
                pieces, given = given_arguments(span, state, in_dquote)
                for binding in given:
                    self._record_flows(binding, span)
                return None, pieces
            return None, [Piece(positional=True, region=span, unknown_span=span, splittable=not in_dquote)]
        if name.isdigit():
            if name == "0":
                return None, unknown("$0 is the path the script is run as")
            given = given_argument(int(name), span, state)
            if given is not None:
                self._record_flows(given, span)
                return given, []
            return None, unknown(f"${name} is a positional argument of the script", argument=True)
        if name == "#" and state.arguments is not None and state.arguments.complete:
            count = str(len(state.arguments.words))
            return Binding((Piece(count, (span,) * len(count)),), ()), []
        if name in ("#", "?", "$", "!", "-", "_"):
            return None, unknown(f"${name} is a special parameter known only at run time")
        if name == "RANDOM":
            return None, unknown("$RANDOM is a random number")
        binding = state.env.get(name)
        if binding is None and name == "OPTARG":
            return None, unknown("$OPTARG is an option argument of the script (getopts)", argument=True)
        if binding is None:
            sourced = f", or set by sourced {', '.join(state.sourced)}" if state.sourced else ""
            return None, unknown(f"${name} is not set in this script (environment{sourced})")
        if binding.hidden is not None:
            return None, unknown(binding.hidden)
        self._record_flows(binding, span)
        return binding, []

    def _masked(self, span: Span) -> List[Piece]:
        token = shorten(self._outer_text(span), 40)
        return self._unmodelled_piece(f"`{token}` is not bash that trainlint can read", span)

    def _simple_expansion(self, node: Node, ctx: Ctx, state: State, in_dquote: bool) -> List[Piece]:
        span = ctx.doc.span(effective_start(ctx.doc, node), node.end_byte)
        if span in self.masked_expansions:
            return self._masked(span)
        name_node = node.named_children[0] if node.named_children else None
        name = node_text(ctx.doc, name_node) if name_node is not None else ""
        binding, explained = self._lookup(name, span, state, in_dquote, node_text(ctx.doc, node))
        if binding is None:
            return explained
        if binding.is_unset:
            return [Piece(region=span)] if in_dquote else []
        return self._use_pieces(binding, span, in_dquote)

    def _expansion(self, node: Node, ctx: Ctx, state: State, in_dquote: bool) -> List[Piece]:
        doc = ctx.doc
        span = doc.span(effective_start(doc, node), node.end_byte)
        if span in self.masked_expansions:
            return self._masked(span)
        token = node_text(doc, node).strip()
        children = [child for child in node.children if child.type not in ("${", "}")]
        prefix = ""
        if children and not children[0].is_named and children[0].type in ("#", "!"):
            prefix = children[0].type
            children = children[1:]
        if not children or children[0].type not in ("variable_name", "special_variable_name", "subscript"):
            return self._unmodelled_piece(f"`{token}` is not modelled", span)
        target = children[0]
        operator_nodes = children[1:]
        subscript = None
        if target.type == "subscript":
            subscript = target.child_by_field_name("index")
            base = target.child_by_field_name("name")
            name = node_text(doc, base) if base is not None else ""
        else:
            name = node_text(doc, target)
        if prefix == "!":
            self._lookup(name, span, state, in_dquote, token)
            return self._unmodelled_piece(f"indirect expansion `{token}` is not modelled", span)
        binding, explained = self._lookup(name, span, state, in_dquote, token)
        if subscript is not None:
            return self._subscript(name, binding, explained, subscript, prefix, span, token, ctx, state, in_dquote)
        if prefix == "#":
            if binding is None:
                return explained
            value = value_of(binding.pieces)
            if isinstance(value, Unknown):
                return [Piece(unknown=value, unknown_span=span, region=span, via=binding.settings)]
            return [computed(str(len(value)), span, binding.settings, in_dquote)]
        if not operator_nodes:
            if binding is None:
                return explained
            if binding.is_unset:
                return [Piece(region=span)] if in_dquote else []
            return self._use_pieces(binding, span, in_dquote)
        operator = operator_nodes[0].type
        operands = operator_nodes[1:]
        if operator in (":-", "-", ":=", "=", ":+", "+", ":?", "?"):
            return self._default_operator(
                name, binding, explained, operator, operands, node, span, ctx, state, in_dquote
            )
        if operator in ("#", "##", "%", "%%"):
            return self._trim_operator(binding, explained, operator, operands, span, token, ctx, state, in_dquote)
        if operator == ":":
            return self._substring(binding, explained, operator_nodes, span, token, ctx, state, in_dquote)
        if operator in ("/", "//"):
            written = doc.data[operator_nodes[0].start_byte:node.end_byte - 1].decode("utf-8", errors="replace")
            parts = _literal_substitution(written)
            if parts is not None:
                return self._substitute(binding, explained, parts, span, token, in_dquote)
        return self._unmodelled_piece(f"`{token}` is not modelled", span, binding)

    def _substitute(self, binding: Optional[Binding], explained: List[Piece], parts: Tuple[str, str, str, bool],
                    span: Span, token: str, in_dquote: bool) -> List[Piece]:
        """`${X//,/ }`: bash's pattern substitution, for a pattern with no wildcard."""
        if binding is None:
            return explained
        value = value_of(binding.pieces)
        if isinstance(value, Unknown):
            return self._use_pieces(binding, span, in_dquote,
                                    [Piece(unknown=Unknown(f"`{token}` substitutes in a value that is not known"))])
        anchor, pattern, replacement, every = parts
        if anchor == "#":
            result = replacement + value[len(pattern):] if value.startswith(pattern) else value
        elif anchor == "%":
            result = value[:len(value) - len(pattern)] + replacement if value.endswith(pattern) else value
        else:
            result = value.replace(pattern, replacement, -1 if every else 1)
        return [computed(result, span, binding.settings, in_dquote)]

    def _unmodelled_piece(self, reason: str, span: Span, binding: Optional[Binding] = None) -> List[Piece]:
        via = binding.settings if binding is not None else ()
        return [Piece(unknown=Unknown(reason), unknown_span=span, region=span, unmodelled=True, via=via)]

    def _operand_pieces(
        self, operands: Sequence[Node], close: Node, ctx: Ctx, state: State, in_dquote: bool
    ) -> Tuple[List[Piece], Span]:
        """The word after an operator (`8` in `${GPUS:-8}`), literal gaps included."""
        doc = ctx.doc
        named = [child for child in operands if child.is_named or child.type not in (":", "}")]
        if not named:
            position = close.start_byte
            return [], doc.span(position, position)
        start, end = named[0].start_byte, close.start_byte
        out: List[Piece] = []
        cursor = start
        for child in named:
            if child.type in EXPANSION_TYPES or child.type in (
                "string",
                "raw_string",
                "concatenation",
                "ansi_c_string",
            ):
                if child.start_byte > cursor:
                    out.extend(literal(doc, cursor, child.start_byte, "dquote" if in_dquote else "word"))
                out.extend(self._pieces(child, ctx, state, in_dquote))
                cursor = child.end_byte
        if end > cursor:
            out.extend(literal(doc, cursor, end, "dquote" if in_dquote else "word"))
        return out, doc.span(start, end)

    def _default_operator(
        self,
        name: str,
        binding: Optional[Binding],
        explained: List[Piece],
        operator: str,
        operands: Sequence[Node],
        node: Node,
        span: Span,
        ctx: Ctx,
        state: State,
        in_dquote: bool,
    ) -> List[Piece]:
        close = node.children[-1]
        null_counts = operator.startswith(":")
        if (
            binding is None
            and explained
            and explained[0].unknown is not None
            and "not set in this script" not in explained[0].unknown.reason
            and not explained[0].script_argument
        ):
            # `$@` or a special parameter: cannot tell whether it is set. A script argument with a
            # fallback (`${1:-8}`) is read like an environment variable's: the fallback, as a default.
            return explained
        if binding is None:
            state_of_value = "unset"
        elif binding.is_unset:
            state_of_value = "unset"
        else:
            value = value_of(binding.pieces)
            if isinstance(value, Unknown):
                return self._use_pieces(binding, span, in_dquote)
            state_of_value = "empty" if value == "" else "set"
        use_word = state_of_value == "unset" or (null_counts and state_of_value == "empty")
        if operator.lstrip(":") == "+":
            use_word = not use_word
            if not use_word:
                return [Piece(region=span)] if in_dquote else []
        if not use_word:
            assert binding is not None
            return self._use_pieces(binding, span, in_dquote)
        if operator.lstrip(":") == "?":
            return [
                Piece(
                    unknown=Unknown(f"${name} is required (`{node_text(ctx.doc, node).strip()}`)"),
                    unknown_span=span,
                    region=span,
                )
            ]
        word_pieces, word_span = self._operand_pieces(operands, close, ctx, state, in_dquote)
        stored = store(word_pieces, word_span)
        default = Setting(
            value_of(stored),
            SourceKind.SHELL_VARIABLE,
            self._origin(word_span),
            self._outer_text(word_span),
            unique([s for p in stored for s in p.via]),
            note=f"default of ${name}",
            # `${1:-8}`: the script's caller passes its own; any other variable comes from the environment.
            fallback=Fallback(name, ReplacedBy.CALLER_ARGUMENT if name[:1].isdigit() else ReplacedBy.ENVIRONMENT),
        )
        default_binding = Binding(stored, (default,))
        self.flows.append(Flow(default.origin, self._origin(span)))  # type: ignore[arg-type]
        if operator.lstrip(":") == "=":
            exported = binding.exported if binding is not None else False
            state.env[name] = replace(default_binding, exported=exported)
        pieces = [
            replace(piece, via=(default,), inner_via=piece.via, region=span, splittable=not in_dquote)
            for piece in word_pieces
        ]
        if in_dquote and not pieces:
            pieces = [Piece(via=(default,), region=span)]
        return pieces

    def _trim_operator(
        self,
        binding: Optional[Binding],
        explained: List[Piece],
        operator: str,
        operands: Sequence[Node],
        span: Span,
        token: str,
        ctx: Ctx,
        state: State,
        in_dquote: bool,
    ) -> List[Piece]:
        if binding is None:
            return explained
        value = value_of(binding.pieces)
        pattern_pieces: List[Piece] = []
        for operand in operands:
            pattern_pieces.extend(self._pieces(operand, ctx, state, in_dquote=True))
        pattern = value_of(pattern_pieces)
        if isinstance(value, Unknown) or isinstance(pattern, Unknown):
            return self._use_pieces(
                binding, span, in_dquote, [Piece(unknown=Unknown(f"`{token}` trims a value that is not known"))]
            )
        if operator in ("%", "%%"):
            cuts = range(len(value), -1, -1) if operator == "%" else range(0, len(value) + 1)
            result = next((value[:cut] for cut in cuts if fnmatch.fnmatchcase(value[cut:], pattern)), value)
        else:
            cuts = range(0, len(value) + 1) if operator == "#" else range(len(value), -1, -1)
            result = next((value[cut:] for cut in cuts if fnmatch.fnmatchcase(value[:cut], pattern)), value)
        return [computed(result, span, binding.settings, in_dquote)]

    def _substring(
        self,
        binding: Optional[Binding],
        explained: List[Piece],
        operator_nodes: Sequence[Node],
        span: Span,
        token: str,
        ctx: Ctx,
        state: State,
        in_dquote: bool,
    ) -> List[Piece]:
        if binding is None:
            return explained
        value = value_of(binding.pieces)
        numbers = []
        for operand in operator_nodes:
            if operand.is_named:
                number, _, _ = self._arith(operand, ctx, state)
                numbers.append(number)
        if isinstance(value, Unknown) or not numbers or any(number is None for number in numbers):
            return self._unmodelled_piece(f"`{token}` takes part of a value that is not known", span, binding)
        offset = numbers[0]
        text = value[offset:] if offset >= 0 else value[len(value) + offset :]
        if len(numbers) > 1:
            length = numbers[1]
            text = text[:length] if length >= 0 else text[: length or None]
        return [computed(text, span, binding.settings, in_dquote)]

    def _subscript(
        self,
        name: str,
        binding: Optional[Binding],
        explained: List[Piece],
        index: Optional[Node],
        prefix: str,
        span: Span,
        token: str,
        ctx: Ctx,
        state: State,
        in_dquote: bool,
    ) -> List[Piece]:
        if binding is None:
            return explained
        elements = binding.elements
        if elements is None:
            if binding.is_unset:
                elements = ()
            elif isinstance(value_of(binding.pieces), Unknown) or binding.setting is None:
                return self._use_pieces(binding, span, in_dquote)
            else:
                elements = (Element(binding.pieces, binding.setting),)
        index_text = node_text(ctx.doc, index).strip() if index is not None else ""
        split = next((position for position, element in enumerate(elements) if element.may_split), None)
        if prefix == "#":
            if index_text in ("@", "*"):
                if split is not None:
                    return [Piece(unknown=Unknown(f"`{token}`: an element is an unquoted expansion of unknown value, "
                                                  "which splits into an unknown number of elements"),
                                  unknown_span=span, region=span, via=binding.settings)]
                return [computed(str(len(elements)), span, binding.settings, in_dquote)]
            return self._unmodelled_piece(f"`{token}` is not modelled", span, binding)
        if index_text in ("@", "*"):
            out: List[Piece] = []
            for position, element in enumerate(elements):
                pieces = self._use_pieces(binding, span, in_dquote, element.pieces, (element.setting,))
                if not pieces:
                    pieces = [Piece(via=(element.setting,), region=span)]
                if position and in_dquote and index_text == "@":
                    pieces[0] = replace(pieces[0], field_break=True)
                elif position:
                    out.append(Piece(" ", (span,), region=span, splittable=not in_dquote))
                out.extend(pieces)
            return out
        number = None
        if index is not None:
            number, _, _ = self._arith(index, ctx, state)
        if number is None or not 0 <= number < len(elements) or (split is not None and number >= split):
            return self._unmodelled_piece(f"array element `{token}` is not known statically", span, binding)
        element = elements[number]
        return self._use_pieces(binding, span, in_dquote, element.pieces, (element.setting,))

    def _command_substitution(self, node: Node, ctx: Ctx, state: State, in_dquote: bool) -> List[Piece]:
        span = ctx.doc.span(effective_start(ctx.doc, node), node.end_byte)
        for child in node.named_children:  # its expansions still read variables
            self._scan(child, ctx, state)
        reason = Unknown(f"command substitution `{shorten(self._outer_text(span))}`")
        return [Piece(unknown=reason, unknown_span=span, region=span, splittable=not in_dquote)]
