"""python-fire command lines: `fire.Fire(train)` makes each parameter of `train` a flag (`--micro_batch_size 8`,
`--micro-batch-size=8`), its default the value when the launch passes none, and refuses a flag it cannot consume
unless the function takes `**kwargs`. Inside the function a parameter is read by its bare name
(`per_device_train_batch_size=micro_batch_size`), as a parsed argument elsewhere is read as `args.x`.

Only a function the module itself defines at its top level is read: a class, a dict of commands or a bare
`Fire()` exposes members whose flags are not one signature's."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import FrozenSet, Optional, Tuple

import libcst as cst

from trainlint.core import SourceKind
from trainlint.readers.facts import FIRE_OWNER, FieldDefault
from trainlint.readers.python.expressions import dotted_name, literal_value
from trainlint.readers.python.values import ValueReader

FIRE_CALLEE = "Fire"
_FIRE_MODULE = "fire"


@dataclass(frozen=True)
class CommandLine:
    """The flags a python-fire function accepts, in the order of its signature."""

    arguments: Tuple[FieldDefault, ...]
    takes_any_flag: bool  # `**kwargs`: fire hands it every flag no parameter takes


def command_functions(tree: Optional[ast.Module], text: str) -> FrozenSet[str]:
    """The top-level functions the module hands to python-fire (`fire.Fire(train)`, `Fire(main)` after
    `from fire import Fire`), from its module-level statements and the main guard."""
    if tree is None or FIRE_CALLEE + "(" not in text:
        return frozenset()
    defined = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    found = set()
    for statement in _module_level(tree.body):
        for node in ast.walk(statement):
            if isinstance(node, ast.Call) and _names_fire(node.func) and len(node.args) == 1 and not node.keywords:
                target = node.args[0]
                if isinstance(target, ast.Name) and target.id in defined:
                    found.add(target.id)
    return frozenset(found)


def _module_level(body):
    """Module-level statements and those of `if` blocks at module level (the main guard), never a function's."""
    for statement in body:
        if isinstance(statement, ast.If):
            yield from _module_level(statement.body)
            yield from _module_level(statement.orelse)
        elif not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield statement


def _names_fire(func: ast.expr) -> bool:
    if isinstance(func, ast.Attribute):
        return func.attr == FIRE_CALLEE and isinstance(func.value, ast.Name) and func.value.id == _FIRE_MODULE
    return isinstance(func, ast.Name) and func.id == FIRE_CALLEE


def is_fire_call(node: cst.Call) -> bool:
    """`fire.Fire(...)` or `Fire(...)`: the reader then asks which function it is given."""
    return dotted_name(node.func) in (f"{_FIRE_MODULE}.{FIRE_CALLEE}", FIRE_CALLEE)


def read_command_line(values: ValueReader, node: cst.Call) -> Optional[CommandLine]:
    """The flags of the function a Fire call is given, when it is one the context knows as a command function."""
    ctx = values.ctx
    if len(node.args) != 1 or node.args[0].keyword is not None or not isinstance(node.args[0].value, cst.Name):
        return None
    name = node.args[0].value.value
    function = ctx.functions.get(name)
    if name not in ctx.command_functions or not isinstance(function, cst.FunctionDef):
        return None
    params = function.params
    arguments = []
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        parameter = param.name.value
        default = None
        note = f"{name}({parameter}=...)"
        if param.default is not None:
            default = values.keyword(parameter, param.default, SourceKind.PARAMETER_DEFAULT, note).setting
        type_name = ctx.text(param.annotation.annotation) if param.annotation is not None else ""
        if not type_name and param.default is not None and isinstance(literal_value(param.default), bool):
            type_name = "bool"
        arguments.append(FieldDefault(parameter, default, FIRE_OWNER, (f"--{parameter}",), type_name,
                                      ctx.origin(param)))
    return CommandLine(tuple(arguments), isinstance(params.star_kwarg, cst.Param))
