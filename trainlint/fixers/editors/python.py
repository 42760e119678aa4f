"""Editing a Python entry script: a literal rewritten with its quote character, and a new keyword added to
the `TrainingArguments(...)` call through libcst so the call keeps its layout."""
from __future__ import annotations

import ast
from pathlib import Path
from typing import TYPE_CHECKING, List, Sequence, Union

from trainlint.core import Edit, Setting, TrainingRun, Value
from trainlint.fixers.editors.common import (
    CannotRender,
    ReadBytes,
    Refused,
    check_scalar,
    read_or_refuse,
    same_value,
    spelling,
)
from trainlint.fixers.edits import narrowed

if TYPE_CHECKING:
    import libcst as cst

_CONFIG_CALLEES = ("TrainingArguments", "Seq2SeqTrainingArguments", "SFTConfig", "DPOConfig", "GRPOConfig",
                   "ORPOConfig", "KTOConfig", "RewardConfig", "PPOConfig")


def python_value(raw: str, new: Value) -> str:
    """A Python literal; a string keeps the old literal's quote character."""
    import libcst as cst  # lazy: libcst (~300 ms) only when a fix renders a Python value, not for `check`

    check_scalar(new)
    if isinstance(new, (bool, int)) or new is None:
        text = repr(new)
    elif isinstance(new, float):
        text = repr(new)
    else:
        quote = "'" if raw.lstrip("rRbBuUfF")[:1] == "'" else "\""
        body = new.replace("\\", "\\\\").replace(quote, "\\" + quote).replace("\n", "\\n")
        text = f"{quote}{body}{quote}"
    try:
        cst.parse_expression(text)
    except cst.ParserSyntaxError as error:
        raise CannotRender(f"{text!r} is not a Python literal") from error
    return text


def _is_literal(raw: str) -> bool:
    try:
        ast.literal_eval(raw)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return True


def replace_value(data: bytes, target: Setting, raw: str, new: Value) -> Edit:
    """The literal `raw` at `target.origin` replaced by `new`; code that is not a literal is left alone, and so is a
    literal that does not hold the value but implies it (argparse's `action="store_true"`: the default False)."""
    if not _is_literal(raw):
        raise Refused(f"`{raw}` at {target.origin} is code, not a literal; change it by hand")
    if same_value(ast.literal_eval(raw), target.value) is False:
        raise Refused(f"`{raw}` at {target.origin} implies the value {target.value!r} but does not hold it; "
                      "change it by hand")
    return Edit(target.origin, python_value(raw, new))


def insert_keyword(run: TrainingRun, knob_name: str, new: Value, read: ReadBytes) -> Edit:
    """A new keyword in the entry script's `TrainingArguments(...)` call, written through libcst so
    the call keeps its layout (the new keyword copies the spacing of the ones before it)."""
    import libcst as cst  # lazy, as in python_value

    from trainlint.readers.python import read_python

    calls = []
    for path in run.facts.python_files or ((run.entry,) if run.entry else ()):
        module = read_python(Path(path))
        calls.extend(call for call in module.config_calls if call.callee.split(".")[-1] in _CONFIG_CALLEES)
    if len(calls) != 1:
        raise Refused("no single `TrainingArguments(...)` call to add the setting to" if not calls else
                      f"{len(calls)} `TrainingArguments(...)` calls: which one runs cannot be told")
    call_origin = calls[0].origin
    data = read_or_refuse(read, call_origin.path)
    old_text = data[call_origin.start_byte:call_origin.end_byte].decode("utf-8")
    name = spelling(run, knob_name, guess=False)
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
    import libcst as cst  # lazy, as in python_value

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
