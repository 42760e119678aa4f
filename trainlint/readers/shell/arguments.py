"""The script's own arguments, when a caller that runs it is read (`bash finetune.sh "$MODEL" 2048`): `$1`, `"$@"`
and `$#` as the caller gives them, `shift` and `set --`, and the calls that hand a script its arguments."""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from trainlint.core import Unknown
from trainlint.readers.facts import ScriptCall
from trainlint.readers.shell.base import ReaderBase
from trainlint.readers.shell.syntax import EXPANSION_TYPES
from trainlint.readers.shell.values import Binding, Ctx, Node, Piece, ScriptArguments, Span, State, Word

# What a script run as `bash NAME ...` is called, as launchers name the scripts they hand arguments to.
SCRIPT_SUFFIXES = (".sh", ".bash")


def given_argument(position: int, span: Span, state: State) -> Optional[Binding]:
    """`$position` as the caller gives it, written at the use `span` and flowing from the caller's word; None when
    the caller is not known or gives fewer words."""
    arguments = state.arguments
    if arguments is None or position > len(arguments.words):
        return None
    setting = arguments.words[position - 1]
    if isinstance(setting.value, str):
        piece = Piece(setting.value, (span,) * len(setting.value))
    else:
        reason = setting.value if isinstance(setting.value, Unknown) else Unknown(
            f"${position} is not a word trainlint can read")
        piece = Piece(unknown=reason, unknown_span=span)
    return Binding((piece,), (setting,))


def given_arguments(span: Span, state: State, in_dquote: bool) -> Tuple[List[Piece], List[Binding]]:
    """`"$@"` (or an unquoted `$@`, `$*`) as the caller gives the words, each a word of its own; with the bindings
    they come from (their flows)."""
    pieces: List[Piece] = []
    bindings: List[Binding] = []
    count = len(state.arguments.words) if state.arguments is not None else 0
    for position in range(1, count + 1):
        given = given_argument(position, span, state)
        if given is None:
            continue
        bindings.append(given)
        pieces.extend(Piece(piece.text, piece.spans, given.settings, (), piece.unknown, piece.unknown_span,
                            not in_dquote, span, field_break=position > 1) for piece in given.pieces)
    return pieces, bindings


def change_positional(builtin: str, args: Sequence[Word], state: State) -> None:
    """`shift [N]` drops the first N arguments a caller gave; `set -- ...` (or `set` with operands) replaces them,
    which is left unknown."""
    arguments = state.arguments
    if arguments is None:
        return
    if builtin == "set":
        if _sets_positional(args):
            state.arguments = None
        return
    count = args[0].known if args else "1"
    if count is None or not count.isdigit() or int(count) > len(arguments.words):
        state.arguments = None  # a count trainlint cannot tell, or more than there are (bash then shifts none)
        return
    state.arguments = ScriptArguments(arguments.words[int(count):], arguments.complete)


def _sets_positional(args: Sequence[Word]) -> bool:
    """Whether `set ARGS` replaces the positional parameters: an operand, or `--`/`-` before any. Options alone
    (`set -e`, `set -euo pipefail`, whose `o` takes the next word as an option's name) leave them."""
    index = 0
    while index < len(args):
        word = args[index].known
        if word is None or word in ("--", "-") or not word.startswith(("-", "+")):
            return True
        index += 2 if "o" in word[1:] else 1
    return False


def _unquoted_expansion(word: Word) -> bool:
    """An expansion written outside quotes (`$EXTRA`, `$(cmd)`): bash splits its value into words, or drops it."""
    return any(node.type in EXPANSION_TYPES for node in word.nodes)


def call_arguments(words: Sequence[Word]) -> ScriptArguments:
    """The words a call passes as `$1`, `$2`, ..., as far as their positions are certain: an unquoted value trainlint
    cannot tell may split into several words (or none), and `"$@"` into any number."""
    arguments = []
    for word in words:
        if word.passthrough or (not isinstance(word.value, str) and _unquoted_expansion(word)):
            return ScriptArguments(tuple(arguments), False)
        arguments.append(word.setting)
    return ScriptArguments(tuple(arguments), True)


class ScriptCallsMixin(ReaderBase):
    """Records the scripts a shell is given with their arguments (`bash finetune.sh "$MODEL" 2048`)."""

    def _script_call(self, node: Node, words: Sequence[Word], index: int, ctx: Ctx, state: State) -> None:
        """`bash path/to/script.sh ARGS`: the script and the words it reads as `$1`, `$2`, ..., as far as their
        positions are certain (an unquoted value trainlint cannot tell may split into several words, and `"$@"`
        into any number)."""
        position = index + 1
        if position >= len(words) or not (words[position].known or "").endswith(SCRIPT_SUFFIXES):
            return  # options (`bash -c`, `bash -x run.sh`) or no script: not a plain call
        arguments = call_arguments(words[position + 1:])
        if not arguments.words:
            return  # run without arguments: it reads as it does by itself
        self.calls.append(ScriptCall(words[position].setting, arguments.words, arguments.complete,
                                     self._origin(self._node_span(ctx.doc, node)),
                                     None if state.cwd_lost else state.cwd, state.cwd_lost))
