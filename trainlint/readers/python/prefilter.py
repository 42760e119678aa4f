"""What the stdlib parser (C, fast) tells about a module before libcst, which costs about ten times the parse,
reads it: which statements, at any depth, can hold a setting, and which functions and classes cannot.

A statement can hold a setting when its subtree holds anything an extractor reads: an import, an `@dataclass`
class, a call the collector dispatches on (`add_argument`, `HfArgumentParser`, `*TrainingArguments`,
`*Trainer`, `from_pretrained`, `gradient_checkpointing_enable`, ...), or an assignment to an attribute of a
parsed namespace (`training_args.x = ...`), to `attn_implementation`, or of `True` to `gradient_checkpointing`.
The rest (model code, data loading, utilities) yields nothing, so:
- a function or class holding none of it (and not building an `eval_dataset` dict) is handed to libcst as a
  bare `pass` on its first line and blank lines after, so that every other line keeps its number and text, and
  every libcst position its value;
- the collector walks only the statements that hold something, at every depth (the headers of the compound
  statements around them included), so no fact changes.
The screen is conservative: when in doubt a statement is kept, and when the stdlib parser and libcst do not see
the same statements, the statement is walked whole as before.
"""

from __future__ import annotations

import ast
import re
import warnings
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import Callable, Dict, FrozenSet, Iterable, Iterator, List, Optional, Sequence, Set, Tuple

import libcst as cst

from trainlint.readers.facts import ATTENTION_PATCH, DEEPSPEED_ARGUMENTS_OWNER, DEEPSPEED_ENGINE_CALLEE
from trainlint.readers.python.argument_classes import DERIVED_PARSER_WORD, HF_PARSERS, may_be_hf_parser
from trainlint.readers.python.config_calls import OTHER_CALL_KEYWORDS, TRL_CONFIGS, is_config_class
from trainlint.readers.python.context import PARSE_METHODS
from trainlint.readers.python.fire_cli import FIRE_CALLEE, command_functions
from trainlint.readers.python.freezing import FREEZE_ATTRIBUTE, FREEZE_METHOD
from trainlint.readers.python.lazy_positions import Anchor
from trainlint.readers.python.narrowing import Span, idle_statement_spans, statement_parts
from trainlint.readers.python.overrides import CAST_CALLEES, KBIT_PREPARATION, LORA_CONVERSION
from trainlint.readers.python.tree_nodes import breadth_first, breadth_first_all, last_name
from trainlint.readers.python.values import CONVENTIONAL_ARGS_NAME

# Calls the collector hands to an extractor by their last name (the rest: HF_PARSERS, OTHER_CALL_KEYWORDS,
# config classes and `*Trainer`).
DISPATCHED_CALLS = frozenset(
    {
        "add_argument",
        "parse_known_args",
        "parse_args_into_dataclasses",
        "parse_args_and_config",  # TRL's parser, which reads `--config recipe.yaml`
        "gradient_checkpointing_enable",
        "gradient_checkpointing_disable",
        "_set_gradient_checkpointing",
        "get_peft_model",
        # deepspeed_calls.py: the parser DeepSpeed extends, and the engine a config built in code reaches
        # (the builder call sits in the same statement, the function that calls deepspeed.initialize).
        DEEPSPEED_ARGUMENTS_OWNER.rsplit(".", 1)[-1],
        DEEPSPEED_ENGINE_CALLEE.rsplit(".", 1)[-1],
        FREEZE_METHOD,  # freezing.py: `module.requires_grad_(False)`
        FIRE_CALLEE,  # fire_cli.py: `fire.Fire(train)`
    }
) | KBIT_PREPARATION
ATTENTION_ATTRIBUTES = frozenset({"attn_implementation", "_attn_implementation"})
# Every name `_dispatched` takes, as a word of the text (a superset: it may be no callee at all).
DISPATCHED_NAME = re.compile(
    r"\b(?:" + "|".join(re.escape(name) for name in sorted(DISPATCHED_CALLS | HF_PARSERS | set(OTHER_CALL_KEYWORDS)
                                                           | TRL_CONFIGS)) + r")\b"
    + r"|(?:Trainer|TrainingArguments)\b|" + DERIVED_PARSER_WORD
    + r"|\.(?:" + "|".join(sorted(CAST_CALLEES)) + r")\("  # overrides.py: `model = model.half()`
    + r"|\breplace_\w+_attn_with_"  # facts.ATTENTION_PATCH
    + r"|(?i:lora)"
)
# libcst's visit takes a few frames per nesting level: fewer characters than this cannot exhaust the stack.
SHORT_STATEMENT_CHARS = 100
EVAL_DATASET = re.compile(r"eval_dataset")
NEWLINE = re.compile(r"\n")
TAB_INDENT = re.compile(r"^[ \f]*\t", re.MULTILINE)


DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
TRIES = (ast.Try, ast.TryStar) if hasattr(ast, "TryStar") else (ast.Try,)  # `except*` from Python 3.11


@dataclass(frozen=True)
class Plan:
    """The stdlib parser's view of a module. `text`: what libcst parses (the functions and classes that hold
    nothing reduced to `pass`); `marked`: ids of the stdlib statements, at any depth, whose subtree holds
    something; `eval_builders`: module-level functions that may return a dict with an `eval_dataset` entry;
    `args_names`: the names bound from a parse call (as the collector's context computes them);
    `command_functions`: the functions python-fire makes the command line of (read whole, their header first)."""

    tree: ast.Module
    text: str
    marked: FrozenSet[int]
    eval_builders: FrozenSet[str]
    args_names: FrozenSet[str]
    command_functions: FrozenSet[str] = frozenset()


@dataclass(frozen=True)
class Screen:
    """Per top-level libcst statement: whether the collector must walk it, and the line its code starts
    on (where libcst's position of the statement starts). `skip`: ids of the libcst statements below those
    that hold nothing; `functions`: the module-level functions by name, None for those reduced to `pass`;
    `anchors`: where each statement matched with the stdlib's starts (by id); `calling`: ids of the top-level
    statements that may call something (a short line of simple statements without a call calls nothing)."""

    walk: Tuple[bool, ...]
    first_lines: Tuple[int, ...]
    eval_builders: FrozenSet[str]
    skip: FrozenSet[int]
    functions: Dict[str, Optional[cst.FunctionDef]]
    anchors: Dict[int, Anchor]
    calling: FrozenSet[int]


def plan_module(text: str, tree: Optional[ast.Module] = None) -> Optional[Plan]:
    """The plan for a module's text, or None when libcst must read the text as it is. `tree`: the stdlib's tree
    of the text, when the caller has it."""
    if "\r" in text.replace("\r\n", ""):
        return None  # a lone carriage return: libcst and the stdlib may count lines differently
    if tree is None:
        tree = stdlib_tree(text)
    if tree is None:
        return None
    args_names = parsed_namespace_names(tree) if "parse_" in text else frozenset()
    line_starts = [0] + [match.end() for match in NEWLINE.finditer(text)]
    # A cast counts only on a name bound to a loaded model (overrides.py): model code that loads none casts tensors.
    casts = "from_pretrained" in text
    marked = _marked_statements(tree.body, args_names, _Occurrences(text, DISPATCHED_NAME, line_starts), casts)
    eval_entries = _Occurrences(text, EVAL_DATASET, line_starts)
    builders = frozenset(
        statement.name
        for statement in tree.body
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef))
        and eval_entries.between(statement.lineno, statement.end_lineno or statement.lineno)
        and _builds_eval_dict(statement)
    )
    commands = command_functions(tree, text)
    kept = {id(statement) for statement in tree.body if getattr(statement, "name", None) in builders | commands}
    reduced = text
    if not TAB_INDENT.search(text):  # libcst's tokenizer may reject tab indentation Python takes: let it see all
        lines = text.split("\n")
        spans = _definition_spans(lines, _idle_definitions(tree.body, marked | kept))
        spans += idle_statement_spans(tree.body, marked, frozenset(kept), lines)
        reduced = _reduced_text(lines, spans)
    return Plan(tree, reduced, marked, builders, args_names, commands)


def screen_module(plan: Plan, module: cst.Module) -> Optional[Screen]:
    """The screen of the module libcst parsed from `plan.text`, or None when the module must be walked whole."""
    groups = _match_statements(plan.tree.body, module.body)
    if groups is None:
        return None
    marked = plan.marked
    walk = tuple(any(id(statement) in marked for statement in group) for group, _ in groups)
    first_lines = tuple(group[0].lineno for group, _ in groups)
    functions: Dict[str, Optional[cst.FunctionDef]] = {}
    for group, statement in groups:
        if isinstance(group[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions[group[0].name] = statement if isinstance(statement, cst.FunctionDef) else None
    anchors = {id(statement): Anchor(line, "") for line, (_, statement) in zip(first_lines, groups)}
    lines = plan.text.split("\n")
    skip: Set[int] = set()
    for (group, statement), walked in zip(groups, walk):
        if walked:
            _skip_idle(group, statement, marked, skip, lambda line, node: _set_anchor(anchors, lines, line, node))
    calling = frozenset(
        id(statement)
        for group, statement in groups
        if not isinstance(statement, cst.SimpleStatementLine)
        or _long(lines, group)
        or any(isinstance(node, ast.Call) for node in breadth_first_all(group))
    )
    return Screen(walk, first_lines, plan.eval_builders, frozenset(skip), functions, anchors, calling)


def _long(lines: Sequence[str], group: Sequence[ast.stmt]) -> bool:
    """A line of statements long enough to nest deeper than libcst can walk: it is walked as before, for libcst
    to say so (a short one cannot)."""
    last = group[-1].end_lineno or group[-1].lineno
    return sum(len(line) + 1 for line in lines[group[0].lineno - 1 : last]) >= SHORT_STATEMENT_CHARS


def _set_anchor(anchors: Dict[int, Anchor], lines: Sequence[str], line: int, statement: cst.CSTNode) -> None:
    text = lines[line - 1]
    anchors[id(statement)] = Anchor(line, text[: len(text) - len(text.lstrip(" \t\f"))])


def stdlib_tree(text: str) -> Optional[ast.Module]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


# ------------------------------------------------ which statements hold something
class _Occurrences:
    """The lines a pattern occurs on: a statement none of whose lines holds a dispatched name holds no
    dispatched call, and the stdlib tree below it need not be walked (walking it costs more than the parse)."""

    def __init__(self, text: str, pattern: "re.Pattern[str]", line_starts: Sequence[int]):
        self._lines = sorted({bisect_right(line_starts, match.start()) for match in pattern.finditer(text)})

    def between(self, first: int, last: int) -> bool:
        index = bisect_left(self._lines, first)
        return index < len(self._lines) and self._lines[index] <= last


def _marked_statements(body: Sequence[ast.stmt], args_names: FrozenSet[str], calls: _Occurrences,
                       casts: bool) -> FrozenSet[int]:
    """Ids of the statements, at any depth, whose subtree holds something an extractor reads."""
    marked: Set[int] = set()

    def mark(statements: Sequence[ast.stmt]) -> bool:  # recursive by block only: Python nests at most 100
        found = False
        for statement in statements:
            own, blocks = statement_parts(statement)
            hit = _holds_setting(statement, args_names)
            if not hit and (blocks or calls.between(statement.lineno, statement.end_lineno or statement.lineno)):
                hit = any(_holds_call(part, casts) for part in own)  # a compound statement's header is short
            for block in blocks:
                hit = mark(block) or hit
            if hit:
                marked.add(id(statement))
                found = True
        return found

    mark(body)
    return frozenset(marked)


def _holds_call(expression: ast.AST, casts: bool) -> bool:
    return any(
        isinstance(node, ast.Call) and (_dispatched(last_name(node.func)) or (casts and _casts_a_name(node)))
        for node in breadth_first(expression)
    )


def _casts_a_name(node: ast.Call) -> bool:
    """A superset of overrides.cast_dtype: a cast method of a bare name (`model.half()`, `model.to(torch.float16)`)."""
    func = node.func
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.attr in CAST_CALLEES):
        return False
    if func.attr != "to":
        return not node.args
    values = [*node.args, *(keyword.value for keyword in node.keywords)]
    return any(isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id == "torch"
               for value in values)


def _all_statements(body: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    stack = list(reversed(body))
    while stack:
        statement = stack.pop()
        yield statement
        for block in reversed(statement_parts(statement)[1]):
            stack.extend(reversed(block))


def _holds_setting(node: ast.stmt, args_names: FrozenSet[str]) -> bool:
    """What a statement itself holds (the calls in it aside)."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return True
    if isinstance(node, ast.ClassDef):
        return any(_is_dataclass(d) for d in node.decorator_list)
    if isinstance(node, ast.Assign):
        return any(_overrides(target, node.value, args_names, True) for target in node.targets)
    if isinstance(node, ast.AugAssign):
        return _overrides(node.target, None, args_names, False)
    return False


def _dispatched(callee: Optional[str]) -> bool:
    if callee is None:
        return False
    return (
        callee in DISPATCHED_CALLS
        or may_be_hf_parser(callee)
        or callee in OTHER_CALL_KEYWORDS
        or is_config_class(callee)
        or callee.endswith("Trainer")
        or bool(LORA_CONVERSION.match(callee))
        or bool(ATTENTION_PATCH.match(callee))
    )


def _is_dataclass(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return last_name(target) == "dataclass"


def _overrides(target: ast.expr, value: Optional[ast.expr], args_names: FrozenSet[str], assigned: bool) -> bool:
    """An assignment the collector records: to an argument namespace's attribute, to an attention kernel,
    `True` to a module's `gradient_checkpointing` (model code sets it False in every `__init__`), or anything
    but `True` to a parameter's `requires_grad`."""
    if not isinstance(target, ast.Attribute):
        return False
    if assigned and target.attr in ATTENTION_ATTRIBUTES:
        return True
    if assigned and target.attr == "gradient_checkpointing" and isinstance(value, ast.Constant) and value.value is True:
        return True
    if assigned and target.attr == FREEZE_ATTRIBUTE and not (isinstance(value, ast.Constant) and value.value is True):
        return True  # freezing.py: `param.requires_grad = False`
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


def parsed_namespace_names(tree: ast.Module) -> FrozenSet[str]:
    """Names bound from a parse call anywhere: `args = parser.parse_args()`, `args, rest = ...parse_known_args()`
    (the first only), `model_args, data_args, training_args = parser.parse_args_into_dataclasses()`."""
    names: Set[str] = set()
    for node in _all_statements(tree.body):
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)):
            continue
        method = last_name(node.value.func)
        if method not in PARSE_METHODS:
            continue
        for target in node.targets:
            names.update(_bound_names(target, first_only=(method == "parse_known_args")))
    return frozenset(names)


def _bound_names(target: ast.expr, first_only: bool) -> List[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        elements = [element.value if isinstance(element, ast.Starred) else element for element in target.elts]
        if first_only:
            elements = elements[:1]
        return [element.id for element in elements if isinstance(element, ast.Name)]
    return []


# ------------------------------------------------ functions and classes libcst need not read
def _idle_definitions(body: Sequence[ast.stmt], keep: FrozenSet[int]) -> List[ast.stmt]:
    """The outermost functions and classes that hold nothing (nor build an eval dict), at any depth: the
    collector never walks them, and the bindings it looks up in a scope never come from inside them."""
    idle: List[ast.stmt] = []
    stack = list(body)
    while stack:
        statement = stack.pop()
        if isinstance(statement, DEFINITIONS) and id(statement) not in keep:
            idle.append(statement)
            continue
        for _, statements in _stdlib_suites(statement):
            stack.extend(statements)
    return idle


def _definition_spans(lines: Sequence[str], idle: Iterable[ast.stmt]) -> List[Span]:
    """The lines of each idle definition, its decorators included; none for a decorator written across lines."""
    spans: List[Span] = []
    for definition in idle:
        first = min([definition.lineno] + [decorator.lineno for decorator in definition.decorator_list])
        code = lines[first - 1].lstrip(" \t\f")
        if code.startswith("@" if definition.decorator_list else ("def", "async", "class")):
            spans.append((first, definition.end_lineno or definition.lineno))
    return spans


def _reduced_text(lines: List[str], spans: Iterable[Span]) -> str:
    """The text with each outermost span reduced to `pass` on its first line and blank lines to its last."""
    reached = 0
    for first, last in sorted(spans, key=lambda span: (span[0], -span[1])):
        if first <= reached:
            continue  # inside a span reduced already
        reached = last
        opening = lines[first - 1]
        code = opening.lstrip(" \t\f")
        lines[first - 1] = opening[: len(opening) - len(code)] + "pass" + ("\r" if opening.endswith("\r") else "")
        for index in range(first, last):
            lines[index] = "\r" if lines[index].endswith("\r") else ""
    return "\n".join(lines)


# ------------------------------------------------ the stdlib statements of each libcst statement
def _match_statements(
    stdlib: Sequence[ast.stmt], parsed: Sequence[cst.BaseStatement]
) -> Optional[List[Tuple[List[ast.stmt], cst.BaseStatement]]]:
    """The stdlib statements of each libcst statement (`a = 1; b = 2` is one line of two)."""
    groups: List[Tuple[List[ast.stmt], cst.BaseStatement]] = []
    index = 0
    for statement in parsed:
        count = len(statement.body) if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) else 1
        group = list(stdlib[index : index + count])
        if len(group) != count or not count:
            return None
        groups.append((group, statement))
        index += count
    return groups if index == len(stdlib) else None


def _skip_idle(
    group: List[ast.stmt],
    statement: cst.BaseStatement,
    marked: FrozenSet[int],
    skip: Set[int],
    anchor: Callable[[int, cst.CSTNode], None],
) -> None:
    """Adds to `skip` the libcst statements below a walked one that hold nothing, and anchors every statement
    it matches with the stdlib's."""
    stack = [(group, statement, True)]
    while stack:
        group, statement, anchored = stack.pop()
        # `if x: y()` starts after the colon; an `elif` renders as `if` alone
        if anchored and not isinstance(statement, cst.SimpleStatementSuite):
            anchor(group[0].lineno, statement)
        if not any(id(part) in marked for part in group):
            skip.add(id(statement))
            continue
        if len(group) != 1 or not isinstance(statement, cst.BaseCompoundStatement):
            continue
        suites = _stdlib_suites(group[0])
        parsed = _parsed_suites(statement)
        if parsed is None or len(suites) != len(parsed):
            continue  # not the same shape: walked whole
        for (kind, stdlib), (parsed_kind, statements) in zip(suites, parsed):
            matched = _match_statements(stdlib, statements) if kind == parsed_kind else None
            if matched is not None:
                elif_branch = bool(statements) and isinstance(statement, cst.If) and statement.orelse is statements[0]
                stack.extend((part, child, not elif_branch) for part, child in matched)


def _stdlib_suites(statement: ast.stmt) -> List[Tuple[str, List[ast.stmt]]]:
    suites = [("body", list(getattr(statement, "body", ())))] if hasattr(statement, "body") else []
    for handler in getattr(statement, "handlers", ()):
        suites.append(("handler", list(handler.body)))
    for case in getattr(statement, "cases", ()):
        suites.append(("case", list(case.body)))
    if isinstance(statement, (ast.If, ast.For, ast.AsyncFor, ast.While) + TRIES):
        suites.append(("orelse", list(statement.orelse)))  # type: ignore[attr-defined]
    if isinstance(statement, TRIES):
        suites.append(("finally", list(statement.finalbody)))  # type: ignore[attr-defined]
    return suites


def _parsed_suites(statement: cst.BaseCompoundStatement) -> Optional[List[Tuple[str, Sequence[cst.BaseStatement]]]]:
    suites: List[Tuple[str, Sequence[cst.BaseStatement]]] = []
    if isinstance(statement, cst.Match):
        return [("case", _block(case.body)) for case in statement.cases]
    suites.append(("body", _block(statement.body)))
    for handler in getattr(statement, "handlers", ()):
        suites.append(("handler", _block(handler.body)))
    if isinstance(statement, (cst.If, cst.For, cst.While, cst.Try, cst.TryStar)):
        orelse = statement.orelse
        if orelse is None:
            suites.append(("orelse", ()))
        elif isinstance(orelse, cst.If):
            suites.append(("orelse", (orelse,)))
        else:
            suites.append(("orelse", _block(orelse.body)))
    if isinstance(statement, (cst.Try, cst.TryStar)):
        suites.append(("finally", () if statement.finalbody is None else _block(statement.finalbody.body)))
    return suites


def _block(suite: cst.BaseSuite) -> Sequence[cst.BaseStatement]:
    if isinstance(suite, cst.IndentedBlock):
        return suite.body
    return (suite,)  # type: ignore[return-value]  # `if x: a; b`: one line of simple statements
