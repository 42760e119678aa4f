"""Editing a bash launcher: a value rewritten in the style of its word (quotes, a `--name=` prefix, the
case of a boolean), a store-true switch dropped, and a new `--flag value` added to the launch command in
the command's own layout (one flag per `\\`-continued line with its indentation, CRLF kept)."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Optional, Tuple

from trainlint.core import Edit, Launcher, Origin, Setting, SourceKind, TrainingRun, Value, written_option
from trainlint.fixers.editors.common import (
    CannotRender,
    ComputedValue,
    ReadBytes,
    Refused,
    check_scalar,
    read_or_refuse,
    same_value,
    spelling,
    split_quotes,
)
from trainlint.fixers.edits import line_ending, origin_of

# What may precede the value inside one shell word: `--name=` or an assignment's `NAME=`.
_WORD_PREFIX = re.compile(r"^(--?[A-Za-z0-9_.\-]+=|[A-Za-z_][A-Za-z0-9_]*=)")
_SHELL_SAFE = re.compile(r"^[A-Za-z0-9_@%+=:,./\-]+$")
# Shell text whose value is computed (arithmetic, a command substitution): never replaced by a constant.
_COMPUTED = re.compile(r"\$\(|`")
_PASSTHROUGH = re.compile(r"^\"?\$(\{)?[@*](\})?\"?$")
_CONTINUATION = re.compile(rb"([ \t]*\\)\r?\n$")


# ------------------------------------------------------------------ values
def _bool_word(value: bool, old_word: str) -> str:
    """`True`/`False` unless the old word was written lower-case (`true`), as HfArgumentParser takes both."""
    word = "True" if value else "False"
    return word.lower() if old_word[:1].islower() and old_word.lower() in ("true", "false") else word


def shell_value(raw: str, new: Value, current: Value = None) -> str:
    """A shell word carrying `new`, keeping the old word's quotes, and its `--name=` (or `NAME=`)
    prefix when the word holds more than the value `current` it was read as."""
    check_scalar(new)
    quote, inner = split_quotes(raw)
    prefix = ""
    found = _WORD_PREFIX.match(inner)
    if found is not None and str(current) != inner:
        prefix, inner = found.group(0), inner[found.end():]
        if not quote:
            quote, inner = split_quotes(inner)  # `--name="8"`
    if isinstance(new, bool):
        text = _bool_word(new, inner)
    elif new is None:
        text = "None"
    elif isinstance(new, float):
        text = repr(new)
    else:
        text = str(new)
    if quote:
        if quote in text or (quote == "\"" and re.search(r"[$`\\!]", text)):
            raise CannotRender(f"cannot place {text!r} inside {quote}{quote}")
        return f"{prefix}{quote}{text}{quote}" if raw.startswith(prefix + quote) and prefix else \
            f"{quote}{prefix}{text}{quote}"
    if not _SHELL_SAFE.match(text):
        if "'" in text:
            raise CannotRender(f"cannot quote {text!r} for the shell")
        return f"{prefix}'{text}'"
    return prefix + text


def is_bare_flag(raw: str) -> bool:
    """`--bf16` standing alone (a store-true style flag), not `--name=value` and not a value word."""
    quote, inner = split_quotes(raw)
    return not quote and inner.startswith("--") and "=" not in inner and len(inner) > 2


def replace_value(data: bytes, target: Setting, raw: str, new: Value) -> Edit:
    """The word `raw` at `target.origin` made to carry `new`."""
    origin = target.origin
    if _COMPUTED.search(raw):
        # `GRADIENT_ACC=$((BATCH_SIZE / PER_DEVICE_BATCH_SIZE / GPUS))`: writing a number there would
        # freeze a value that follows its inputs.
        raise ComputedValue(f"`{raw}` at {origin} is computed from other settings; change its inputs by hand")
    pair = target.switch
    if target.kind == SourceKind.LAUNCHER_FLAG and is_bare_flag(raw) and pair is not None:
        # A `--x/--no-x` switch (axolotl's click options): the other side of the pair, never a value word.
        if not isinstance(new, bool):
            raise Refused(f"`{raw}` at {origin} is a switch; it cannot carry {new!r}")
        return Edit(origin, pair.on if new else pair.off)
    if target.kind == SourceKind.LAUNCHER_FLAG and is_bare_flag(raw):
        if not target.written_as_flag:
            # A store-true switch of the script's own argparse, read directly (`bf16=args.bf16`)
            # or negated (`fp16=not args.bf16`): `--x False` would not parse, so the switch goes.
            return drop_switch(data, origin, raw, target.value, new)
        return Edit(origin, f"{raw} {shell_value('True', new)}")  # HfArgumentParser: `--bf16` -> `--bf16 False`
    return Edit(origin, shell_value(raw, new, target.value))


def drop_switch(data: bytes, origin: Origin, raw: str, current: Value, new: Value) -> Edit:
    """Remove a store-true switch that is present, so that the knob it feeds becomes `new`. The knob
    reads the switch as it is (`current` True) or negated (`current` False)."""
    switch_after = new if current is True else not new if current is False else None
    if switch_after is not False:
        raise Refused(f"`{raw}` at {origin} is a switch of the entry script's own parser; change it by hand")
    start, end = origin.start_byte, origin.end_byte
    line_start = data.rfind(b"\n", 0, start) + 1
    line_end = data.find(b"\n", end)
    line_end = len(data) if line_end < 0 else line_end
    before, after = data[line_start:start], data[end:line_end]
    if not before.strip() and after.strip() == b"\\" and line_end < len(data):
        start, end = line_start, line_end + 1  # the switch has its own continued line: drop the line
    else:
        while start > line_start and data[start - 1:start] in (b" ", b"\t"):
            start -= 1  # and the blank that separated it from the word before
    return Edit(_byte_origin(origin.path, data, start, end), "")


def _byte_origin(path: str, data: bytes, start: int, end: int) -> Origin:
    def line_column(offset: int) -> Tuple[int, int]:
        line_start = data.rfind(b"\n", 0, offset) + 1
        return data.count(b"\n", 0, offset) + 1, len(data[line_start:offset].decode("utf-8", "replace")) + 1

    (line, column), (end_line, end_column) = line_column(start), line_column(end)
    return Origin(path, line, column, end_line, end_column, start, end)


# ------------------------------------------------------------------ a new flag
def _find_launch(run: TrainingRun):
    from trainlint.readers.markdown import DOCUMENT_SUFFIX, read_documented_commands
    from trainlint.readers.shell import read_shell

    path = Path(run.origin.path)
    # A README's command is read from its shell code blocks, in place: the edit lands in the document's bytes.
    script = read_documented_commands(path) if path.suffix.lower() == DOCUMENT_SUFFIX else read_shell(path)
    for launch in script.launches:
        if launch.origin is not None and launch.origin.start_byte == run.origin.start_byte:
            return launch
    return None


def _inside(setting: Setting, run: TrainingRun) -> bool:
    origin = setting.origin
    return (origin is not None and origin.path == run.origin.path
            and run.origin.start_byte <= origin.start_byte and origin.end_byte <= run.origin.end_byte)


def _anchor(launch, run: TrainingRun) -> Setting:
    """The word the new flag goes after: the last script argument written in the command itself
    (not a `"$@"` passthrough, after which a caller's flags would be overridden), else the entry."""
    words = [w for w in launch.script_args if _inside(w, run)]
    while words and _PASSTHROUGH.match(words[-1].text or str(words[-1].value)):
        words.pop()
    if words:
        return max(words, key=lambda w: w.origin.end_byte)
    if launch.entry is not None and _inside(launch.entry, run):
        return launch.entry
    raise Refused("the launch command has no argument to place a new flag after")


def _separator(data: bytes, anchor_start: int, newline: str) -> str:
    """` \\` + newline + indentation when the command is written one flag per line, else a space."""
    line_start = data.rfind(b"\n", 0, anchor_start) + 1
    before = data[:line_start]
    continued = _CONTINUATION.search(before)
    if line_start == 0 or continued is None:
        return " "
    indentation = re.match(rb"[ \t]*", data[line_start:anchor_start]).group(0).decode("utf-8")
    return continued.group(1).decode("utf-8") + newline + indentation


def switch_option(run: TrainingRun, name: str) -> Optional[Tuple[str, bool]]:
    """The entry script's argparse switch `name` names (`use_lora` for `--use-lora`): the option as the script
    writes it and the value it sets when given; None when `name` is no switch."""
    found = _argparse_option(run, name)
    return (found[0], found[1]) if found is not None and found[1] is not None else None


def _argparse_option(run: TrainingRun, name: str) -> Optional[Tuple[str, Optional[bool]]]:
    """The entry script's argparse option `name` names, as the script writes it: argparse takes `--seq-length` as
    written, not as `--seq_length` (HfArgumentParser takes both)."""
    return written_option(run.facts.argparse_options, name)


def insert_flag(run: TrainingRun, knob_name: str, new: Value, read: ReadBytes) -> Edit:
    """A new `--flag value` after the last argument of the run's launch command."""
    if run.origin is None or run.origin.end_byte <= run.origin.start_byte:
        raise Refused("the run has no launch command to add a flag to")
    data = read_or_refuse(read, run.origin.path)
    launch = _find_launch(run)
    if launch is None:
        raise Refused("the launch command is no longer where it was read")
    if launch.launcher == Launcher.LLAMAFACTORY_CLI:
        raise Refused("llamafactory-cli takes its settings from the recipe, not from flags")
    if run.launcher == Launcher.AXOLOTL:
        raise Refused("axolotl takes its settings from the recipe; its command accepts only its own options")
    anchor = _anchor(launch, run)
    name = spelling(run, knob_name, guess=False)
    switch = switch_option(run, name)
    if switch is not None:
        # argparse's store_true: given bare it sets its value, and any value word after it stops the launch.
        option, sets = switch
        if same_value(sets, new) is not True:
            raise Refused(f"`--{option}` is a switch that sets {sets}: adding it cannot set {new!r}")
        written = f"--{option}"
    else:
        option = _argparse_option(run, name)
        try:
            written = f"--{option[0] if option is not None else name} {shell_value('', new)}"
        except CannotRender as error:
            raise Refused(str(error)) from error
    content = _separator(data, anchor.origin.start_byte, line_ending(data)) + written
    return Edit(origin_of(run.origin.path, data, anchor.origin.end_byte, anchor.origin.end_byte), content)
