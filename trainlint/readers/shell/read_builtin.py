"""The `read` builtin: which variables it sets, and to what when the script writes its input.

With input from a here-doc or a here-string, `read` is run as bash runs it: it reads up to the delimiter
(a newline, or `-d c`; `-d ''` reads up to a NUL, that is all of it), removes backslash-newline and the
backslash of `\\c` unless `-r`, and splits what it read at the blanks of IFS over the names it is given (the
last one takes the rest; leading and trailing blanks are dropped; `REPLY`, when no name is given, keeps
them). Every character keeps the byte it was written at. Any other input leaves the variables unknown."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Dict, List, Optional, Sequence, Tuple

from trainlint.core import Setting, SourceKind, Unknown, Value
from trainlint.readers.shell.base import ReaderBase
from trainlint.readers.shell.heredocs import StandardInput
from trainlint.readers.shell.values import Binding, Ctx, Node, Piece, Span, State, Word, store, unique, value_of

DEFAULT_IFS = " \t\n"
_BLANKS = " \t\n"
_TAKES_VALUE = set("adinNptu")


@dataclass(frozen=True)
class ReadOptions:
    names: Tuple[Word, ...]
    raw: bool = False
    delimiter: str = "\n"
    unmodelled: str = ""  # why what `read` assigns is not modelled (`-a`, `-n`, `-u`, an unknown option)


@dataclass(frozen=True)
class _Char:
    """One character of the input (`index` into its piece's text), or a piece with no text (index -1)."""

    piece: Piece
    index: int = -1
    span: Optional[Span] = None  # a `\\c` pair read as `c`: both bytes
    escaped: bool = False

    @property
    def text(self) -> Optional[str]:
        return self.piece.text[self.index] if self.index >= 0 else None

    @property
    def unknown(self) -> bool:
        return self.piece.unknown is not None or self.piece.positional


def read_options(args: Sequence[Word]) -> ReadOptions:
    """`read`'s options as bash's getopts reads them (`-rd ''`, `-d,`), then its variable names."""
    raw, delimiter, unmodelled = False, "\n", ""
    index = 0
    while index < len(args):
        text = args[index].known
        if text is None:
            return ReadOptions((), unmodelled=f"`{args[index].setting.text}` is not known")
        if text == "--":
            index += 1
            break
        if not text.startswith("-") or text == "-":
            break
        index += 1
        position = 1
        while position < len(text):
            letter = text[position]
            position += 1
            if letter == "r":
                raw = True
            elif letter in _TAKES_VALUE:
                value: Optional[str] = text[position:]
                if not value:
                    value = args[index].known if index < len(args) else None
                    index += 1
                position = len(text)
                if value is None:
                    unmodelled = f"the value of `read -{letter}` is not known"
                elif letter == "d":
                    delimiter = value[:1] or "\0"
                elif letter == "a":
                    unmodelled = "`read -a` fills an array, which is not modelled"
                elif letter in "nN":
                    unmodelled = f"`read -{letter}` reads a number of characters, which is not modelled"
                elif letter == "u":
                    unmodelled = "`read -u` reads another file descriptor"
                elif letter == "t" and value.strip("0.") == "":
                    unmodelled = "`read -t 0` reads nothing"
            elif letter not in "se":
                unmodelled = f"`read -{letter}` is not a `read` option"
    return ReadOptions(tuple(args[index:]), raw, delimiter, unmodelled)


def _chars(pieces: Sequence[Piece]) -> List[_Char]:
    out: List[_Char] = []
    for piece in pieces:
        if piece.unknown is not None or piece.positional or not piece.text:
            out.append(_Char(piece))
        else:
            out.extend(_Char(piece, index) for index in range(len(piece.text)))
    return out


def _unescape(chars: List[_Char]) -> List[_Char]:
    """Without `-r`: a backslash-newline is removed and `\\c` is the character c, which no longer splits."""
    out: List[_Char] = []
    index = 0
    while index < len(chars):
        char = chars[index]
        if char.text == "\\" and index + 1 < len(chars):
            following = chars[index + 1]
            if following.text == "\n":
                index += 2
                continue
            if following.text is not None:
                span = following.piece.spans[following.index] if following.piece.spans else None
                if span is not None and char.piece is following.piece and char.piece.spans:
                    span = (char.piece.spans[char.index][0], span[1])
                out.append(replace(following, span=span, escaped=True))
                index += 2
                continue
        if not (char.text == "\\" and index + 1 == len(chars)):
            out.append(char)
        index += 1
    return out


def _pieces_of(chars: Sequence[_Char]) -> List[Piece]:
    """The characters as pieces again: runs of one piece kept whole."""
    out: List[Piece] = []
    run: List[_Char] = []

    def flush() -> None:
        if run:
            out.append(run[0].piece.slice(run[0].index, run[-1].index + 1))
            run.clear()

    for char in chars:
        if char.index < 0 or char.span is not None:
            flush()
            if char.index < 0:
                out.append(char.piece)
            else:
                piece = char.piece.slice(char.index, char.index + 1)
                out.append(replace(piece, spans=(char.span,) if piece.spans else ()))
            continue
        if run and (run[-1].piece is not char.piece or run[-1].index + 1 != char.index):
            flush()
        run.append(char)
    flush()
    return out


class ReadBuiltinMixin(ReaderBase):
    """Assigns the variables `read` names, from the here-doc or here-string the script feeds it."""

    def _read_builtin(self, args: Sequence[Word], redirects: Sequence[Node], prefix_env: Dict[str, Setting],
                      ctx: Ctx, state: State) -> None:
        options = read_options(args)
        # A name that is not known sets a variable no one can tell; it is left alone, as before.
        names = [word for word in options.names if word.known and word.setting.origin is not None]
        stdin = self._standard_input(redirects, ctx, state)
        if stdin is None:
            reason = "is read from input by `read`"
        elif stdin.pieces is None:
            reason = f"is read by `read` {stdin.reason}"
        elif options.unmodelled:
            reason = f"is read by `read` from the input the script writes, but {options.unmodelled}"
        else:
            ifs = self._read_ifs(prefix_env, state)
            if isinstance(ifs, Unknown):
                reason = f"is read by `read`, which splits at IFS, and {ifs.reason}"
            elif len(names) == len(options.names):
                self._assign_read(options, names, stdin, ifs, ctx, state)
                return
            else:
                reason = "is read by `read` together with a variable whose name is not known"
        for word in names:
            assert word.setting.origin is not None
            self._read_unknown(word, f"${word.known} {reason} at line {word.setting.origin.line}", state)

    def _read_ifs(self, prefix_env: Dict[str, Setting], state: State) -> Value:
        if "IFS" in prefix_env:
            value = prefix_env["IFS"].value
        else:
            binding = state.env.get("IFS")
            if binding is None or binding.is_unset:
                return DEFAULT_IFS
            if binding.hidden is not None or binding.setting is None:
                return Unknown("IFS is not known here")
            value = binding.setting.value
        if isinstance(value, Unknown):
            return Unknown(f"IFS is not known ({value.reason})")
        if any(char not in _BLANKS for char in value):
            return Unknown("IFS holds characters other than blanks, which is not modelled")
        return value

    def _read_unknown(self, word: Word, reason: str, state: State) -> None:
        origin = word.setting.origin
        assert origin is not None and word.known is not None
        unknown = Unknown(reason)
        setting = Setting(unknown, SourceKind.SHELL_VARIABLE, origin, word.setting.text)
        span = (origin.start_byte, origin.end_byte)
        previous = state.env.get(word.known)
        exported = previous.exported if previous is not None and not previous.hidden else False
        state.env[word.known] = Binding((Piece(unknown=unknown, unknown_span=span),), (setting,), exported)

    def _assign_read(self, options: ReadOptions, names: Sequence[Word], stdin: StandardInput, ifs: str,
                     ctx: Ctx, state: State) -> None:
        assert stdin.pieces is not None
        chars = _chars(stdin.pieces)
        if not options.raw:
            chars = _unescape(chars)
        delimiter = "a NUL" if options.delimiter == "\0" else "a newline" if options.delimiter == "\n" else (
            f"`{options.delimiter}`")
        line: List[_Char] = []
        for char in chars:
            if char.unknown and options.delimiter != "\0":
                reason = f"{char.piece.unknown.reason if char.piece.unknown else 'an unknown value'}, " \
                         f"and `read` stops at the first {delimiter}, which that value may hold"
                line.append(_Char(replace(char.piece, unknown=Unknown(reason), positional=False)))
                break
            if char.text == options.delimiter and not char.escaped:
                break
            line.append(char)
        if not names:
            self._bind_read("REPLY", None, line, ctx, state)
            return
        blanks = set(ifs)

        def is_blank(char: _Char) -> bool:
            return char.text is not None and char.text in blanks and not char.escaped

        position = 0
        while position < len(line) and is_blank(line[position]):
            position += 1
        for number, word in enumerate(names):
            assert word.known is not None
            if number == len(names) - 1:
                rest = line[position:]
                while rest and is_blank(rest[-1]):
                    rest = rest[:-1]
                self._bind_read(word.known, word, rest, ctx, state)
                return
            field: List[_Char] = []
            while position < len(line) and not is_blank(line[position]):
                if line[position].unknown:
                    for later in names[number:]:
                        self._read_unknown(later, f"${later.known} is read by `read` at line "
                                           f"{later.setting.origin.line if later.setting.origin else 0}, which "
                                           "splits a line holding an unknown value at its blanks", state)
                    return
                field.append(line[position])
                position += 1
            while position < len(line) and is_blank(line[position]):
                position += 1
            self._bind_read(word.known, word, field, ctx, state)

    def _bind_read(self, name: str, word: Optional[Word], chars: Sequence[_Char], ctx: Ctx, state: State) -> None:
        pieces = _pieces_of(chars)
        starts = [span[0] for piece in pieces for span in piece.spans]
        ends = [span[1] for piece in pieces for span in piece.spans]
        starts += [piece.unknown_span[0] for piece in pieces if piece.unknown is not None]
        ends += [piece.unknown_span[1] for piece in pieces if piece.unknown is not None]
        if starts:
            span: Span = (min(starts), max(ends))
        elif word is not None and word.setting.origin is not None:
            span = (word.setting.origin.start_byte, word.setting.origin.end_byte)
        else:
            span = (0, 0)
        stored = store(pieces, span)
        via = unique([setting for piece in stored for setting in piece.via])
        setting = Setting(value_of(stored), SourceKind.SHELL_VARIABLE, self._origin(span), self._outer_text(span),
                          via)
        previous = state.env.get(name)
        exported = previous.exported if previous is not None and not previous.hidden else False
        state.env[name] = Binding(stored, (setting,), exported)
