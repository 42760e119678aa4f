"""The state after one of several branches ran: a variable they disagree on becomes Unknown."""

from __future__ import annotations

from dataclasses import replace
from typing import Optional, Sequence

from trainlint.core import Fallback, ReplacedBy, Setting, SourceKind, Unknown
from trainlint.readers.shell.syntax import shorten
from trainlint.readers.shell.values import (
    Binding,
    Piece,
    State,
    binding_key,
    from_script_arguments,
    is_argument_default,
    unique,
    value_of,
)


def adopt(state: State, merged: State) -> None:
    """Continue in `state` (the object the caller holds) from the merged state."""
    state.env, state.cwd, state.cwd_lost = merged.env, merged.cwd, merged.cwd_lost
    state.functions, state.sourced, state.written = merged.functions, merged.sourced, merged.written
    state.arguments = merged.arguments


def merge(branches: Sequence[State], line: int) -> State:
    """The state after one of `branches` ran: a variable they disagree on becomes Unknown."""
    first = branches[0]
    merged = first.copy()
    names = dict.fromkeys(name for branch in branches for name in branch.env)
    for name in names:
        bindings = [branch.env.get(name) for branch in branches]
        if all(binding is bindings[0] for binding in bindings):
            continue
        merged.env[name] = merged_binding(name, bindings, line)
    if any(branch.arguments is not first.arguments for branch in branches):
        merged.arguments = None  # shifted in one branch (or one pass of a loop) and not in another
    cwds = {(branch.cwd, branch.cwd_lost) for branch in branches}
    if len(cwds) > 1:
        merged.cwd, merged.cwd_lost = None, True
    for branch in branches[1:]:
        merged.functions.update(branch.functions)
        merged.sourced = tuple(dict.fromkeys(merged.sourced + branch.sourced))
        # A file one branch writes may be there afterwards: never reported missing.
        merged.written = tuple(dict.fromkeys(merged.written + branch.written))
    return merged


def merged_binding(name: str, bindings: Sequence[Optional[Binding]], line: int) -> Binding:
    kept = argument_default(name, bindings, line)
    if kept is not None:
        return kept
    settings = unique([s for binding in bindings if binding is not None for s in binding.settings])
    described = []
    for setting in settings:
        if setting.origin is not None:
            described.append(f"`{shorten(setting.text, 30)}` at line {setting.origin.line}")
    if any(binding is None for binding in bindings):
        described.append("the caller's environment")
    if any(binding is not None and binding.is_unset for binding in bindings):
        described.append("unset")
    reason = Unknown(
        f"${name} depends on which branch of the statement at line {line} runs: "
        + " or ".join(dict.fromkeys(described))
    )
    summary = Setting(reason, SourceKind.SHELL_VARIABLE, None, "", via=settings)
    exported = any(binding is not None and binding.exported for binding in bindings)
    return Binding((Piece(unknown=reason),), settings, exported, summary)


def argument_default(name: str, bindings: Sequence[Optional[Binding]], line: int) -> Optional[Binding]:
    """An option-parsing loop (`case $1 in -m) MODEL=$2`, `getopts`) replaces a value only when the
    script is given that option; run as written, the value assigned before the loop is the one used,
    like `${MODEL:-default}`. None when the branches disagree on anything else."""
    if any(binding is None or binding.is_unset or binding.elements is not None for binding in bindings):
        return None
    from_arguments = [from_script_arguments(binding) for binding in bindings]
    written = [binding for binding, argument in zip(bindings, from_arguments) if not argument]
    if not written or len({binding_key(binding) for binding in written}) != 1:
        return None
    # A default noted by an inner option loop meets the unchanged binding again in the outer merge.
    noted = [binding for binding in written if is_argument_default(binding)]
    if noted:
        return noted[0]
    base = written[0]
    if not any(from_arguments) or isinstance(value_of(base.pieces), Unknown):
        return None
    note = f"default of ${name} (an option of the script, handled at line {line}, may replace it)"
    fallback = Fallback(name, ReplacedBy.SCRIPT_OPTION)
    settings = tuple(replace(setting, note=note, fallback=fallback) for setting in base.settings)
    exported = any(binding.exported for binding in bindings if binding is not None)
    return Binding(base.pieces, settings, exported)
