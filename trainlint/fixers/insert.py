"""Setting a knob that nothing pins yet: a new flag in the launch command, a new keyword in the
`TrainingArguments(...)` call, a new key in a recipe YAML."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Callable, List, Optional, Sequence, Union

import libcst as cst

from trainlint.core import Edit, Setting, TrainingRun, Value
from trainlint.fixers.edits import line_ending, narrowed, origin_of
from trainlint.fixers.render import CannotRender, python_value, shell_value, yaml_value
from trainlint.knobs import ARGS, AXOLOTL
from trainlint.knobs import knob as knob_spec

ReadBytes = Callable[[str], Optional[bytes]]

_PASSTHROUGH = re.compile(r"^\"?\$(\{)?[@*](\})?\"?$")
_CONTINUATION = re.compile(rb"([ \t]*\\)\r?\n$")
_CONFIG_CALLEES = ("TrainingArguments", "Seq2SeqTrainingArguments", "SFTConfig", "DPOConfig", "GRPOConfig",
                   "ORPOConfig", "KTOConfig", "RewardConfig", "PPOConfig")


class Refused(Exception):
    """The change cannot be written safely; the message says why (shown to the user)."""


def spelling(run: TrainingRun, knob_name: str, namespace: str = ARGS) -> str:
    """The name to write: the first spelling of the knob the entry point accepts."""
    names = knob_spec(knob_name).spellings.get(namespace, ())
    if not names:
        raise Refused(f"`{knob_name}` has no {namespace} spelling to write")
    accepted = run.facts.accepted_flags
    if accepted is None:
        return names[0]
    for name in names:
        if name in accepted or name.replace("-", "_") in accepted:
            return name
    raise Refused(f"the entry point's parser accepts no spelling of `{knob_name}` ({', '.join(names)})")


# ------------------------------------------------------------------ shell
def _find_launch(run: TrainingRun):
    from trainlint.readers.shell import read_shell

    script = read_shell(Path(run.origin.path))
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


def flag_edit(run: TrainingRun, knob_name: str, new: Value, read: ReadBytes) -> Edit:
    """A new `--flag value` after the last argument of the run's launch command."""
    if run.origin is None or run.origin.end_byte <= run.origin.start_byte:
        raise Refused("the run has no launch command to add a flag to")
    data = read(run.origin.path)
    if data is None:
        raise Refused(f"cannot read {run.origin.path}")
    launch = _find_launch(run)
    if launch is None:
        raise Refused("the launch command is no longer where it was read")
    if launch.launcher == "llamafactory-cli":
        raise Refused("llamafactory-cli takes its settings from the recipe, not from flags")
    anchor = _anchor(launch, run)
    name = spelling(run, knob_name)
    try:
        value = shell_value("", new)
    except CannotRender as error:
        raise Refused(str(error)) from error
    content = _separator(data, anchor.origin.start_byte, line_ending(data)) + f"--{name} {value}"
    return Edit(origin_of(run.origin.path, data, anchor.origin.end_byte, anchor.origin.end_byte), content)


# ------------------------------------------------------------------ yaml recipe
def yaml_key_edit(run: TrainingRun, knob_name: str, new: Value, read: ReadBytes) -> Edit:
    """A new top-level `key: value` line at the end of a recipe."""
    path = run.origin.path
    data = read(path)
    if data is None:
        raise Refused(f"cannot read {path}")
    namespace = AXOLOTL if run.launcher == "axolotl" else ARGS
    key = spelling(run, knob_name, namespace)
    newline = line_ending(data)
    try:
        value = yaml_value("", new)
    except CannotRender as error:
        raise Refused(str(error)) from error
    lead = "" if not data or data.endswith(b"\n") else newline
    return Edit(origin_of(path, data, len(data), len(data)), f"{lead}{key}: {value}{newline}")


# ------------------------------------------------------------------ python
def keyword_edit(run: TrainingRun, knob_name: str, new: Value, read: ReadBytes) -> Edit:
    """A new keyword in the entry script's `TrainingArguments(...)` call, written through libcst so
    the call keeps its layout (the new keyword copies the spacing of the ones before it)."""
    from trainlint.readers.python import read_python

    calls = []
    for path in run.facts.python_files or ((run.entry,) if run.entry else ()):
        module = read_python(Path(path))
        calls.extend(call for call in module.config_calls if call.callee.split(".")[-1] in _CONFIG_CALLEES)
    if len(calls) != 1:
        raise Refused("no single `TrainingArguments(...)` call to add the setting to" if not calls else
                      f"{len(calls)} `TrainingArguments(...)` calls: which one runs cannot be told")
    call_origin = calls[0].origin
    data = read(call_origin.path)
    if data is None:
        raise Refused(f"cannot read {call_origin.path}")
    old_text = data[call_origin.start_byte:call_origin.end_byte].decode("utf-8")
    name = spelling(run, knob_name)
    try:
        value = python_value("", new)
        node = cst.parse_expression(old_text)
    except (CannotRender, cst.ParserSyntaxError) as error:
        raise Refused(f"cannot rewrite the call: {error}") from error
    if not isinstance(node, cst.Call):
        raise Refused("the setting call is not a plain call")
    if any(arg.keyword is not None and arg.keyword.value == name for arg in node.args):
        raise Refused(f"`{name}=` is already passed in the call")
    rewritten = node.with_changes(args=_with_keyword(list(node.args), name, cst.parse_expression(value)))
    new_text = cst.Module(body=()).code_for_node(rewritten)
    return narrowed(call_origin.path, data, call_origin.start_byte, call_origin.end_byte, new_text)


def _with_keyword(args: List[cst.Arg], name: str, value: cst.BaseExpression) -> Sequence[cst.Arg]:
    keywords = [arg for arg in args if arg.keyword is not None]
    equal: Union[cst.AssignEqual, cst.MaybeSentinel] = keywords[-1].equal if keywords else cst.AssignEqual(
        whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))
    new_arg = cst.Arg(value=value, keyword=cst.Name(name), equal=equal)
    if not args:
        return [new_arg]
    last = args[-1]
    between = args[-2].comma if len(args) > 1 and isinstance(args[-2].comma, cst.Comma) else cst.Comma(
        whitespace_after=cst.SimpleWhitespace(" "))
    # The new keyword becomes the last argument: it takes the old last one's trailing comma (if any)
    # and the whitespace before `)`; the old last one takes the separator the others use.
    new_arg = new_arg.with_changes(comma=last.comma, whitespace_after_arg=last.whitespace_after_arg)
    moved = last.with_changes(comma=between, whitespace_after_arg=cst.SimpleWhitespace(""))
    return args[:-1] + [moved, new_arg]


# ------------------------------------------------------------------ deepspeed config
_ZERO_SECTION = re.compile(rb'"zero_optimization"\s*:\s*\{')


def deepspeed_key_edit(path: str, key: str, device: Value, read: ReadBytes) -> Edit:
    """A new `"<key>": {"device": ..., "pin_memory": true}` entry at the top of the config's
    `zero_optimization` section (offload of the optimizer states or of the parameters)."""
    data = read(path)
    if data is None:
        raise Refused(f"cannot read {path}")
    sections = list(_ZERO_SECTION.finditer(data))
    if len(sections) != 1:
        raise Refused(f"{path} has no single `zero_optimization` section to add {key} to")
    if not isinstance(device, str) or not device:
        raise Refused(f"no offload device to write for {key}")
    opening = sections[0].end()
    following = data[opening:]
    empty = following.lstrip().startswith(b"}")
    newline = line_ending(data)
    next_line = re.match(rb"[ \t]*\r?\n([ \t]*)\S", following)
    if next_line is not None and not empty:
        indentation = next_line.group(1).decode("utf-8")
        entry = f'{newline}{indentation}"{key}": {{"device": "{device}", "pin_memory": true}},'
    else:
        entry = f' "{key}": {{"device": "{device}", "pin_memory": true}}' + ("" if empty else ",")
    return Edit(origin_of(path, data, opening, opening), entry)
