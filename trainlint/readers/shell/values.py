"""The interpreter's values: pieces of expanded text with their origins, bindings, states and words."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Dict, List, Optional, Sequence, Tuple

import tree_sitter

from trainlint.core import Origin, ReplacedBy, Setting, Unknown, Value
from trainlint.readers.shell.options import Launcher

Node = tree_sitter.Node
Span = Tuple[int, int]


@dataclass(frozen=True)
class Piece:
    """A run of characters of an expanded value, each with the outer byte span it was written at.

    `via` names the assignments expanded at this use; `inner_via` the assignments the stored value was
    itself built from (used when a split word points inside the assignment). `region` is the use-site
    span of the expansion the piece came from (None for text written at the use site)."""

    text: str = ""
    spans: Tuple[Span, ...] = ()
    via: Tuple[Setting, ...] = ()
    inner_via: Tuple[Setting, ...] = ()
    unknown: Optional[Unknown] = None
    unknown_span: Span = (0, 0)
    splittable: bool = False
    region: Optional[Span] = None
    unmodelled: bool = False
    positional: bool = False
    field_break: bool = False
    # `$1`, `$2`, `$OPTARG`: a value the script's own command line gives, only when it is given one.
    script_argument: bool = False

    def slice(self, start: int, end: int) -> "Piece":
        # Built field by field: dataclasses.replace looks every field up again, and words slice a lot.
        return Piece(self.text[start:end], self.spans[start:end], self.via, self.inner_via, self.unknown,
                     self.unknown_span, self.splittable, self.region, self.unmodelled, self.positional, False,
                     self.script_argument)


@dataclass(frozen=True)
class Element:
    pieces: Tuple[Piece, ...]
    setting: Setting
    # Written as an unquoted expansion whose value is unknown (`(${LIST//,/ })`): bash splits it into any
    # number of elements, so the count and the positions from here on are unknown.
    may_split: bool = False


@dataclass(frozen=True)
class Binding:
    pieces: Tuple[Piece, ...]
    settings: Tuple[Setting, ...]
    exported: bool = False
    summary: Optional[Setting] = None  # stands for several settings (assigned differently in branches)
    elements: Optional[Tuple[Element, ...]] = None  # arrays
    hidden: Optional[str] = None  # why the variable is invisible here (not exported into an inner shell)
    is_unset: bool = False

    @property
    def setting(self) -> Optional[Setting]:
        if self.summary is not None:
            return self.summary
        return self.settings[0] if self.settings else None


@dataclass
class State:
    env: Dict[str, Binding] = field(default_factory=dict)
    cwd: Optional[str] = None
    cwd_lost: bool = False
    dir_stack: List[Optional[str]] = field(default_factory=list)
    functions: Dict[str, Tuple[Node, "Doc"]] = field(default_factory=dict)
    sourced: Tuple[str, ...] = ()
    local_frames: List[Dict[str, Optional[Binding]]] = field(default_factory=list)
    # Files written so far by output redirections (Launch.written).
    written: Tuple[str, ...] = ()
    # The script's own arguments, `$1` first, when a caller that runs it is read (None: its command line is
    # unknown, as when it runs by itself, and inside a function, whose `$1` is its own).
    arguments: Optional["ScriptArguments"] = None

    def copy(self) -> "State":
        return State(
            dict(self.env),
            self.cwd,
            self.cwd_lost,
            list(self.dir_stack),
            dict(self.functions),
            self.sourced,
            [dict(frame) for frame in self.local_frames],
            self.written,
            self.arguments,
        )


@dataclass(frozen=True)
class ScriptArguments:
    """The words a caller runs the script with (`bash finetune.sh "$DATA" 2048`), as far as their positions are
    certain; `complete`: no word may have split into several, so `$#` is their count."""

    words: Tuple[Setting, ...]
    complete: bool


@dataclass(frozen=True)
class Doc:
    """Bytes tree-sitter parsed; for an inner shell (`bash -c '...'`) each byte maps to outer bytes."""

    data: bytes
    root: Node
    starts: Optional[Tuple[int, ...]] = None
    ends: Optional[Tuple[int, ...]] = None

    def span(self, start: int, end: int) -> Span:
        if self.starts is None or self.ends is None:
            return start, end
        size = len(self.starts)
        if size == 0:
            return 0, 0
        if start >= end:
            position = self.starts[start] if start < size else self.ends[size - 1]
            return position, position
        return self.starts[min(start, size - 1)], self.ends[min(end, size) - 1]


@dataclass(frozen=True)
class Ctx:
    doc: Doc
    wrapper: Optional[str] = None
    function_depth: int = 0
    shell_depth: int = 0
    shell_label: str = ""
    # The options of that wrapper (`srun --ntasks=8 ...`): they say how many processes it starts.
    wrapper_args: Tuple[Setting, ...] = ()
    # The calls with arguments of the functions being run, outermost first (Launch.called_at).
    called_at: Tuple[Origin, ...] = ()


@dataclass(frozen=True)
class Word:
    setting: Setting
    pieces: Tuple[Piece, ...]
    nodes: Tuple[Node, ...]
    passthrough: bool = False
    unmodelled: Tuple[str, ...] = ()

    @property
    def value(self) -> Value:
        return self.setting.value

    @property
    def known(self) -> Optional[str]:
        value = self.setting.value
        return value if isinstance(value, str) else None

    @property
    def prefix(self) -> str:
        """The known text before the first unknown part (`--node_rank=` of `--node_rank=$RANK`)."""
        text = ""
        for piece in self.pieces:
            if piece.unknown is not None or piece.positional:
                break
            text += piece.text
        return text


@dataclass(frozen=True)
class LaunchShape:
    launcher: Launcher
    launcher_args: Tuple[Word, ...]
    entry: Optional[Word]  # None: `llamafactory-cli train --flag ...` names no recipe
    entry_is_module: bool
    script_args: Tuple[Word, ...]


def from_script_arguments(binding: Binding) -> bool:
    """The variable holds exactly a value from the script's command line (`MODEL=$2`, `=$OPTARG`)."""
    return bool(binding.pieces) and all(piece.script_argument or (piece.unknown is None and not piece.text)
                                        for piece in binding.pieces) and any(p.script_argument for p in binding.pieces)


def is_argument_default(binding: Binding) -> bool:
    return bool(binding.settings) and all(
        setting.fallback is not None and setting.fallback.replaced_by == ReplacedBy.SCRIPT_OPTION
        for setting in binding.settings)


def binding_key(binding: Binding) -> Tuple:
    """What a binding was assigned, whatever notes its settings carry."""
    return tuple((setting.origin, setting.text) for setting in binding.settings)


def unique(settings: Sequence[Setting]) -> Tuple[Setting, ...]:
    """`settings` without repeats of the same object, in order (by identity: equal settings written at two
    places are two settings)."""
    seen: Dict[int, Setting] = {}
    for setting in settings:
        seen.setdefault(id(setting), setting)
    return tuple(seen.values())


# Bounds of a value the reader follows. No setting is this long, but bash builds what it is told: `V=$V$V`
# doubles the value at each line, and a script of a few hundred lines in a pull request would otherwise take
# every byte of memory. Past either bound the value is unknown.
MAX_VALUE_CHARS = 100_000
MAX_VALUE_PIECES = 10_000


OVERSIZED = Unknown(f"the value grows past {MAX_VALUE_CHARS:,} characters or {MAX_VALUE_PIECES:,} parts; "
                    "trainlint does not follow it")


def exceeds_bounds(pieces: Sequence[Piece]) -> bool:
    """Whether `pieces` hold more text or more pieces than a value the reader follows, or a value that
    already did (so that `V=$V$V` stays one unknown piece instead of growing again)."""
    if len(pieces) > MAX_VALUE_PIECES:
        return True
    chars = 0
    for piece in pieces:
        chars += len(piece.text)
        if chars > MAX_VALUE_CHARS or piece.unknown is OVERSIZED:
            return True
    return False


def oversized(span: Span) -> Piece:
    """The piece that stands for a value past the bounds: unknown, pointing at where it was written."""
    return Piece(unknown=OVERSIZED, unknown_span=span, region=span, unmodelled=True)


def store(pieces: Sequence[Piece], span: Span) -> Tuple[Piece, ...]:
    """Pieces as a variable keeps them: expansion results point at the expansion token; a value past the
    bounds is kept as unknown."""
    if exceeds_bounds(pieces):
        return (oversized(span),)
    stored: List[Piece] = []
    for piece in pieces:
        if piece.region is None:
            stored.append(replace(piece, splittable=False, field_break=False, inner_via=()))
        else:
            region = piece.region
            stored.append(
                Piece(
                    piece.text,
                    (region,) * len(piece.text),
                    piece.via,
                    (),
                    piece.unknown,
                    region,
                    False,
                    None,
                    piece.unmodelled,
                    piece.positional,
                    script_argument=piece.script_argument,
                )
            )
    return tuple(stored)


def value_of(pieces: Sequence[Piece]) -> Value:
    reasons = [p.unknown.reason for p in pieces if p.unknown is not None]
    if any(p.positional for p in pieces):
        reasons.append("the script's arguments ($@) are passed through")
    if not reasons:
        return "".join(p.text for p in pieces)
    if len(reasons) == 1 and len(pieces) == 1 and pieces[0].unknown is not None:
        return pieces[0].unknown
    return Unknown("; ".join(dict.fromkeys(reasons)))


def computed(text: str, span: Span, via: Tuple[Setting, ...], in_dquote: bool) -> Piece:
    """Text the reader computed from `via` (`${#X}`, `$((X*2))`), pointing at the whole expansion."""
    return Piece(text, (span,) * len(text), via, via, None, span, not in_dquote, span)
