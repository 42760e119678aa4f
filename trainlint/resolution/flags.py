"""Splitting a launched script's words into `--name value` pairs, as an argument parser would."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from trainlint.core import Origin, Setting, SourceKind, Unknown


@dataclass(frozen=True)
class ParsedFlag:
    name: str  # without leading dashes, as written
    value: Setting  # the value word (a bare boolean flag gets value True at the flag's origin)
    flag: Setting  # the flag word itself
    bare: bool = False  # `--do_train` with no value


def _suborigin(origin: Origin, skip: int, text: str) -> Origin:
    """The origin of the part of a literal word after its first `skip` characters (same line)."""
    prefix = text[:skip].encode("utf-8")
    return replace(origin, column=origin.column + skip, start_byte=origin.start_byte + len(prefix))


def _is_option(setting: Setting) -> bool:
    return isinstance(setting.value, str) and setting.value.startswith("--") and len(setting.value) > 2


def _unknown_assignment(word: Setting) -> Optional[str]:
    """The option name of `--nnodes=$WORLD_SIZE` when the value part is unknown (the whole word then
    is): the option is still given, with a value trainlint cannot tell."""
    if not isinstance(word.value, Unknown) or not word.text or not word.text.startswith("--"):
        return None
    name, equals, _ = word.text[2:].partition("=")
    return name if equals and name and name.replace("-", "_").isidentifier() else None


def parse_flags(words: Sequence[Setting], is_bool: Callable[[str], bool]) -> Tuple[List[ParsedFlag], List[Setting]]:
    """`--a 1 --b=2 --flag --c "x"` -> flags; words that belong to no flag are returned as positionals.
    `is_bool(name)` says whether a flag may stand alone (HF booleans accept `--flag` and `--flag True`)."""
    flags: List[ParsedFlag] = []
    positionals: List[Setting] = []
    index = 0
    while index < len(words):
        word = words[index]
        if word.value == "--":
            # argparse's end of options: what follows is positional, however it is spelt (a job submitter's
            # `mason.py --gpus 8 -- accelerate launch train.py --lr 1e-5` hands it on as a command).
            positionals.extend(words[index + 1:])
            break
        unknown_name = _unknown_assignment(word)
        if unknown_name is not None:
            flags.append(ParsedFlag(unknown_name, word, word))
            index += 1
            continue
        if not _is_option(word):
            positionals.append(word)
            index += 1
            continue
        text = word.value
        if "=" in text:
            name, _, raw = text[2:].partition("=")
            value_origin = word.origin
            written_literal = word.text == text and word.origin is not None and not word.via
            if written_literal:
                value_origin = _suborigin(word.origin, len(name) + 3, text)
            flags.append(ParsedFlag(name, replace(word, value=raw, origin=value_origin,
                                                  text=raw if written_literal else word.text), word))
            index += 1
            continue
        name = text[2:]
        following = words[index + 1] if index + 1 < len(words) else None
        next_is_value = following is not None and not _is_option(following) and following.value != "--"
        if next_is_value and is_bool(name) and isinstance(following.value, str) and following.value not in (
                "True", "true", "False", "false", "1", "0", "yes", "no"):
            next_is_value = False
        if next_is_value:
            flags.append(ParsedFlag(name, following, word))
            index += 2
        else:
            bare_value = True if is_bool(name) or following is None or _is_option(following) \
                or following.value == "--" else Unknown(
                f"`--{name}` has no value")
            flags.append(ParsedFlag(name, Setting(bare_value, SourceKind.LAUNCHER_FLAG, word.origin, word.text,
                                                  note=f"--{name}", written_as=f"--{name}"), word, bare=True))
            index += 1
    return flags, positionals


def last_by_name(flags: Sequence[ParsedFlag]) -> Dict[str, ParsedFlag]:
    """argparse keeps the last occurrence of a repeated option."""
    found: Dict[str, ParsedFlag] = {}
    for flag in flags:
        found[flag.name] = flag
    return found


def option_value(words: Sequence[Setting], *names: str) -> Optional[Setting]:
    """The value word of a launcher option given as `--name v` or `--name=v` (last one wins)."""
    flags, _ = parse_flags(words, lambda _name: False)
    wanted = {n.lstrip("-") for n in names}
    found = None
    for flag in flags:
        if flag.name in wanted:
            found = flag.value
    return found


def key_value(word: Setting) -> Optional[Tuple[str, Setting]]:
    """A `key=value` word (an OmegaConf-style override after a recipe): the key, and the value with
    its own origin when the word is written literally."""
    text = word.value
    if not isinstance(text, str) or text.startswith("-") or "=" not in text:
        return None
    key, _, raw = text.partition("=")
    if not key or not key.replace("_", "a").replace(".", "a").isalnum():
        return None
    origin = word.origin
    literal = word.text == text and origin is not None and not word.via
    if literal:
        origin = _suborigin(origin, len(key) + 1, text)
    return key, replace(word, value=raw, origin=origin, text=raw if literal else word.text)


def as_flag(setting: Setting, spelling: str, **changes) -> Setting:
    """`setting` as the launcher flag `spelling` (`--bf16`, or `cutoff_len` of `cutoff_len=1024`) passes it."""
    return replace(setting, kind=SourceKind.LAUNCHER_FLAG, note=spelling, written_as=spelling, **changes)
