"""What every editor shares: how a change is refused, how a value is checked before it is spelled,
which name a new setting is written under, and when two values are the same to the trainer."""
from __future__ import annotations

from typing import Callable, Optional, Tuple

from trainlint.core import Launcher, TrainingRun, Unknown, Value
from trainlint.knobs import ARGS, HF_TRAINING_ARGUMENTS_FIELDS, SWIFT, K
from trainlint.knobs import knob as knob_spec

ReadBytes = Callable[[str], Optional[bytes]]

_QUOTES = ("\"", "'")


class Refused(Exception):
    """The change cannot be written safely; the message says why (shown to the user)."""


class ComputedValue(Refused):
    """The place to write is computed from other settings (shell arithmetic, a command substitution): a
    constant there would stop it following its inputs. Changing those inputs may still give the value."""


class CannotRender(ValueError):
    """The value has no faithful spelling in this file (an Unknown, a structure)."""


def check_scalar(new: Value) -> None:
    if isinstance(new, Unknown) or isinstance(new, (list, dict, tuple)):
        raise CannotRender(f"cannot write {new!r}")


def split_quotes(raw: str) -> Tuple[str, str]:
    """`"8"` -> ('"', '8'); `8` -> ('', '8')."""
    if len(raw) >= 2 and raw[0] in _QUOTES and raw[-1] == raw[0]:
        return raw[0], raw[1:-1]
    return "", raw


def read_or_refuse(read: ReadBytes, path: str) -> bytes:
    data = read(path)
    if data is None:
        raise Refused(f"cannot read {path}")
    return data


def spelling(run: TrainingRun, knob_name: str, namespace: str = ARGS, guess: bool = True,
             place: str = "command-line flag") -> str:
    """The name to write: the first spelling of the knob the entry point accepts. When the parser's flags are
    not all known, a spelling the script defines itself, else a TrainingArguments field; else the knob's first
    spelling if `guess` (a recipe's key), or refused: a flag the script does not take stops the launch."""
    if run.launcher == Launcher.SWIFT and namespace == ARGS:
        return _swift_spelling(knob_name)
    names = knob_spec(knob_name).spellings.get(namespace, ())
    if not names:
        raise Refused(f"no {place} sets `{knob_name}`")
    accepted = run.facts.accepted_flags
    if accepted is None:
        own = run.facts.own_flags
        for name in names:
            if name.replace("-", "_") in own:
                return name
        if namespace == ARGS:
            for name in names:
                if name in HF_TRAINING_ARGUMENTS_FIELDS:
                    return name
        if guess:
            return names[0]
        raise Refused(f"the entry point's flags are not all known, and none it defines itself sets `{knob_name}` "
                      f"({', '.join(names)})")
    for name in names:
        if name in accepted or name.replace("-", "_") in accepted:
            return name
    raise Refused(f"the entry point's parser accepts no spelling of `{knob_name}` ({', '.join(names)})")


def _swift_spelling(knob_name: str) -> str:
    """ms-swift's flag for a knob: its own spelling, else the TrainingArguments field it takes as well."""
    if knob_name == K.LORA:
        raise Refused("ms-swift picks adapters with `--tuner_type lora` (`--train_type` before 4.0), not a switch; "
                      "change it by hand")
    spellings = knob_spec(knob_name).spellings
    own = spellings.get(SWIFT, ())
    if own:
        return own[0]
    for name in spellings.get(ARGS, ()):
        if name in HF_TRAINING_ARGUMENTS_FIELDS:
            return name
    raise Refused(f"no ms-swift flag trainlint knows sets `{knob_name}`")


def same_value(first: Value, second: Value) -> Optional[bool]:
    """Whether two values are equal as the trainer would read them (`"4"` and 4 are)."""
    if isinstance(first, Unknown) or isinstance(second, Unknown):
        return None
    if isinstance(first, bool) or isinstance(second, bool):
        return _truth(first) == _truth(second) if _truth(first) is not None else False
    if isinstance(first, str) and isinstance(second, str):
        return first == second
    try:
        return float(first) == float(second)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return str(first) == str(second)


def _truth(value: Value) -> Optional[bool]:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    if isinstance(value, int):
        return bool(value)
    return None
