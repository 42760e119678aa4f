"""Which top-level statements of a module can hold a setting, decided with the stdlib parser (C, fast)
before the libcst walk, which costs about ten times the parse.

A statement is walked by the collector when its subtree holds anything an extractor reads: an import,
an `@dataclass` class, a call the collector dispatches on (`add_argument`, `HfArgumentParser`,
`*TrainingArguments`, `*Trainer`, `from_pretrained`, `gradient_checkpointing_enable`, ...), or an
assignment to an attribute of a parsed namespace (`training_args.x = ...`) or to `attn_implementation`.
The rest (model code, data loading, utilities) yields nothing, so skipping it changes no fact. The
screen is conservative: when in doubt a statement is kept, and when the stdlib parser and libcst do
not see the same statements, there is no screen and the whole module is walked as before.
"""

from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass
from typing import FrozenSet, List, Optional, Sequence, Tuple

import libcst as cst

from trainlint.readers.facts import DEEPSPEED_ARGUMENTS_OWNER, DEEPSPEED_ENGINE_CALLEE
from trainlint.readers.python.argument_classes import HF_PARSERS
from trainlint.readers.python.config_calls import OTHER_CALL_KEYWORDS, is_config_class
from trainlint.readers.python.context import PARSE_METHODS
from trainlint.readers.python.overrides import LORA_CONVERSION
from trainlint.readers.python.values import CONVENTIONAL_ARGS_NAME

# Calls the collector hands to an extractor by their last name (the rest: HF_PARSERS, OTHER_CALL_KEYWORDS,
# config classes and `*Trainer`).
DISPATCHED_CALLS = frozenset(
    {
        "add_argument",
        "parse_known_args",
        "parse_args_into_dataclasses",
        "gradient_checkpointing_enable",
        "gradient_checkpointing_disable",
        "_set_gradient_checkpointing",
        "prepare_model_for_kbit_training",
        "get_peft_model",
        # deepspeed_calls.py: the parser DeepSpeed extends, and the engine a config built in code reaches
        # (the builder call sits in the same statement, the function that calls deepspeed.initialize).
        DEEPSPEED_ARGUMENTS_OWNER.rsplit(".", 1)[-1],
        DEEPSPEED_ENGINE_CALLEE.rsplit(".", 1)[-1],
    }
)
ATTENTION_ATTRIBUTES = frozenset({"attn_implementation", "_attn_implementation"})


@dataclass(frozen=True)
class Screen:
    """Per top-level libcst statement: whether the collector must walk it, and the line its code starts
    on (where libcst's position of the statement starts). `eval_builders`: module-level functions that
    may return a dict with an `eval_dataset` entry."""

    walk: Tuple[bool, ...]
    first_lines: Tuple[int, ...]
    eval_builders: FrozenSet[str]

    @property
    def anything(self) -> bool:
        return any(self.walk) or bool(self.eval_builders)


def screen_module(text: str, module: cst.Module) -> Optional[Screen]:
    """The screen of a parsed module, or None when the module must be walked whole."""
    if "\r" in text.replace("\r\n", ""):
        return None  # a lone carriage return: libcst and the stdlib may count lines differently
    tree = _stdlib_tree(text)
    if tree is None:
        return None
    groups = _match_statements(tree.body, module.body)
    if groups is None:
        return None
    args_names = _parsed_names(tree) if "parse_" in text else frozenset()
    walk = tuple(any(_holds_setting(statement, args_names) for statement in group) for group in groups)
    first_lines = tuple(group[0].lineno for group in groups)
    builders = frozenset(
        statement.name
        for statement in tree.body
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) and _builds_eval_dict(statement)
    )
    return Screen(walk, first_lines, builders)


def _stdlib_tree(text: str) -> Optional[ast.Module]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _match_statements(
    stdlib: Sequence[ast.stmt], parsed: Sequence[cst.BaseStatement]
) -> Optional[List[List[ast.stmt]]]:
    """The stdlib statements of each libcst statement (`a = 1; b = 2` is one line of two)."""
    groups: List[List[ast.stmt]] = []
    index = 0
    for statement in parsed:
        count = len(statement.body) if isinstance(statement, cst.SimpleStatementLine) else 1
        group = list(stdlib[index : index + count])
        if len(group) != count or not count:
            return None
        groups.append(group)
        index += count
    return groups if index == len(stdlib) else None


def _parsed_names(tree: ast.Module) -> FrozenSet[str]:
    """Every name bound from a parse call, anywhere (a superset of what the collector treats as a namespace)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            if _last_name(node.value.func) in PARSE_METHODS:
                for target in node.targets:
                    names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return frozenset(names)


def _holds_setting(statement: ast.stmt, args_names: FrozenSet[str]) -> bool:
    for node in ast.walk(statement):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            return True
        if isinstance(node, ast.Call) and _dispatched(_last_name(node.func)):
            return True
        if isinstance(node, ast.ClassDef) and any(_is_dataclass(d) for d in node.decorator_list):
            return True
        if isinstance(node, ast.Assign) and any(_overrides(target, args_names, True) for target in node.targets):
            return True
        if isinstance(node, ast.AugAssign) and _overrides(node.target, args_names, False):
            return True
    return False


def _dispatched(callee: Optional[str]) -> bool:
    if callee is None:
        return False
    return (
        callee in DISPATCHED_CALLS
        or callee in HF_PARSERS
        or callee in OTHER_CALL_KEYWORDS
        or is_config_class(callee)
        or callee.endswith("Trainer")
        or bool(LORA_CONVERSION.match(callee))
    )


def _is_dataclass(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return _last_name(target) == "dataclass"


def _overrides(target: ast.expr, args_names: FrozenSet[str], attention_too: bool) -> bool:
    if not isinstance(target, ast.Attribute):
        return False
    if attention_too and (target.attr in ATTENTION_ATTRIBUTES or target.attr == "gradient_checkpointing"):
        return True
    owner = target.value
    return isinstance(owner, ast.Name) and (owner.id in args_names or bool(CONVENTIONAL_ARGS_NAME.match(owner.id)))


def _builds_eval_dict(function: ast.AST) -> bool:
    for node in ast.walk(function):
        if isinstance(node, ast.Dict) and any(
            isinstance(key, ast.Constant) and key.value == "eval_dataset" for key in node.keys
        ):
            return True
        if isinstance(node, ast.Call) and any(keyword.arg == "eval_dataset" for keyword in node.keywords):
            return True
    return False


def _last_name(node: ast.expr) -> Optional[str]:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None
