"""Inner shells: the command string of `bash -c '...'` (often behind `srun`), read as a script of its own."""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

from trainlint.core import Setting, Unknown
from trainlint.readers.shell.base import ReaderBase
from trainlint.readers.shell.launches import basename
from trainlint.readers.shell.recovery import ParsedScript, parse_script
from trainlint.readers.shell.syntax import EXPANSION_TYPES, effective_start, literal
from trainlint.readers.shell.values import Binding, Ctx, Doc, Piece, State, Word

MAX_SHELL_DEPTH = 4


def inner_shell_state(state: State, env: Dict[str, Setting], sees_everything: bool, label: str) -> State:
    """What the inner shell starts with: no functions, the prefix `env`, and the outer variables it can see:
    all of them when the outer shell expands them itself (double quotes), else only the exported ones."""
    inner = state.copy()
    inner.functions = {}
    inner.local_frames = []
    if not sees_everything:
        inner.arguments = None  # `bash -c '... $1'`: the inner shell's own arguments (none but its $0)
    if not sees_everything:
        for name, binding in state.env.items():
            if not binding.exported and binding.hidden is None:
                inner.env[name] = Binding(
                    (),
                    (),
                    hidden=(
                        f"${name} is set in the script but not exported, so the inner shell of `{label}` "
                        "does not see it"
                    ),
                )
    for name, setting in env.items():
        text = setting.value if isinstance(setting.value, str) else ""
        pieces: Tuple[Piece, ...]
        if isinstance(setting.value, Unknown):
            pieces = (Piece(unknown=setting.value),)
        else:
            span = (setting.origin.start_byte, setting.origin.end_byte) if setting.origin else (0, 0)
            pieces = (Piece(text, (span,) * len(text)),)
        inner.env[name] = Binding(pieces, (setting,), exported=True)
    return inner


class InnerShellsMixin(ReaderBase):
    """Interprets `bash -c '...'` bodies with the variables the inner shell actually sees."""

    def _inner_shell(
        self, words: Sequence[Word], index: int, env: Dict[str, Setting], wrapper: str, ctx: Ctx, state: State
    ) -> None:
        shell = basename(words[index]) or "bash"
        position = index + 1
        command_word: Optional[Word] = None
        while position < len(words):
            text = words[position].known or ""
            if text.startswith("-") and len(text) > 1 and not text.startswith("--"):
                if "c" in text[1:]:
                    command_word = words[position + 1] if position + 1 < len(words) else None
                    break
                position += 1
                continue
            if text.startswith("--"):
                position += 1
                continue
            break
        if command_word is None or not command_word.nodes or ctx.shell_depth >= MAX_SHELL_DEPTH:
            return
        label = f"{wrapper} ... {shell} -c" if wrapper != shell else f"{shell} -c"
        built = self._inner_doc(command_word, ctx, state)
        if built is None:
            span = ctx.doc.span(command_word.nodes[0].start_byte, command_word.nodes[-1].end_byte)
            self._unmodelled(f"the command string of `{label}` is built from values trainlint cannot resolve", span)
            return
        doc, sees_everything, parsed = built
        inner_state = inner_shell_state(state, env, sees_everything, label)
        self.masked_expansions.update(doc.span(*mask.span) for mask in parsed.masks if mask.what == "expansion")
        self._report_parse_problems(parsed, doc)
        inner_ctx = Ctx(doc, wrapper, ctx.function_depth, ctx.shell_depth + 1, label, ctx.wrapper_args, ctx.called_at)
        self._exec(doc.root, inner_ctx, inner_state)

    def _inner_doc(self, word: Word, ctx: Ctx, state: State) -> Optional[Tuple[Doc, bool, ParsedScript]]:
        """The command string as the inner shell reads it, each byte mapped to the outer file.

        Returns the document and whether the inner shell sees every outer variable (True when the outer
        shell expands them itself, inside double quotes)."""
        node = word.nodes[0]
        doc = ctx.doc
        data = bytearray()
        starts: List[int] = []
        ends: List[int] = []

        def add_raw(start: int, end: int) -> None:
            for position in range(start, end):
                outer = doc.span(position, position + 1)
                data.append(doc.data[position])
                starts.append(outer[0])
                ends.append(outer[1])

        def add_pieces(pieces: Sequence[Piece]) -> None:
            for piece in pieces:
                for char, span in zip(piece.text, piece.spans):
                    encoded = char.encode("utf-8")
                    data.extend(encoded)
                    starts.extend([span[0]] * len(encoded))
                    ends.extend([span[1]] * len(encoded))

        if len(word.nodes) == 1 and node.type == "raw_string":
            add_raw(node.start_byte + 1, node.end_byte - 1)
            sees_everything = False
        elif len(word.nodes) == 1 and node.type == "string":
            cursor = node.start_byte + 1
            for child in node.children:
                if child.type in EXPANSION_TYPES:
                    start = effective_start(doc, child)
                    add_pieces(literal(doc, cursor, start, "dquote"))
                    add_raw(start, child.end_byte)
                    cursor = child.end_byte
            add_pieces(literal(doc, cursor, node.end_byte - 1, "dquote"))
            sees_everything = True
        else:
            if any(piece.unknown is not None or piece.positional for piece in word.pieces):
                return None
            add_pieces(word.pieces)
            sees_everything = False
        parsed = parse_script(bytes(data))
        return Doc(parsed.data, parsed.tree.root_node, tuple(starts), tuple(ends)), sees_everything, parsed
