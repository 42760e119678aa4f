"""Reading one Python file: its text screened, planned by the stdlib parser (which statements can hold a
setting), the part that can parsed by libcst and walked once; syntax errors and unanalysable text reported
as diagnostics, never raised."""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import replace
from pathlib import Path
from typing import FrozenSet, List, Optional, Tuple, Union

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from trainlint.core import Diagnostic, DiagnosticKind, Setting
from trainlint.readers.facts import FIRE_OWNER, PythonModule
from trainlint.readers.python.adapter_inputs import asks_about_adapters, makes_inputs_require_grad, wraps_in_adapters
from trainlint.readers.python.collector import Collector
from trainlint.readers.python.context import Context
from trainlint.readers.python.eval_data import EvalDataReader
from trainlint.readers.python.fire_cli import command_functions
from trainlint.readers.python.lazy_positions import StatementPositions
from trainlint.readers.python.leftover_args import known_args_rest_used
from trainlint.readers.python.notebook import blank_lines, ipython_lines, is_notebook_source
from trainlint.readers.python.parser_helpers import (
    builds_parser,
    namespace_helpers,
    parser_helpers,
    refuses_abbreviations,
)
from trainlint.readers.python.positions import ByteLocator
from trainlint.readers.python.prefilter import (
    Plan,
    Screen,
    parsed_namespace_names,
    plan_module,
    screen_module,
    stdlib_tree,
)
from trainlint.readers.python.screening import STDLIB_PARSER_GUARDS_DEPTH, too_deep_to_parse
from trainlint.readers.python.step_gates import COPIED_LOOP, forward_only_steps
from trainlint.readers.python.train_gate import train_gate
from trainlint.readers.python.tree_nodes import TreeNodes, tree_nodes
from trainlint.readers.source import SourceText, read_source


def read_python(path: Union[str, Path]) -> PythonModule:
    """Everything trainlint needs from one Python file. Never raises, never runs the file."""
    source = read_source(path)
    if isinstance(source, Diagnostic):
        return PythonModule(path=source.path, diagnostics=(source,))
    has_bom = source.text.startswith("\ufeff")
    text = source.text[1:] if has_bom else source.text
    if is_notebook_source(text):
        return _read_notebook(source, has_bom, text)
    return _read_text(source, has_bom, text)


def _read_notebook(source: SourceText, has_bom: bool, text: str) -> PythonModule:
    """A notebook source: its Python, with each IPython line reported as not read."""
    spans = ipython_lines(text)
    locator = ByteLocator(source, has_bom)
    lines = text.split("\n")
    diagnostics = []
    for first, last in spans:
        origin = source.origin(locator.offset(first, 0), locator.offset(last, len(lines[last - 1].rstrip("\r"))))
        command = " ".join(lines[first - 1].split())
        shown = command if len(command) <= 60 else command[:57] + "..."
        message = (f"`{shown}` is an IPython line of a notebook source, which Python itself rejects; the notebook "
                   "runs it, trainlint does not read it")
        diagnostics.append(Diagnostic(DiagnosticKind.UNMODELLED_CONSTRUCT, message, source.path, origin))
    module = _read_text(source, has_bom, blank_lines(text, spans))
    return replace(module, diagnostics=(*diagnostics, *module.diagnostics))


def _read_text(source: SourceText, has_bom: bool, text: str) -> PythonModule:
    try:
        # The stdlib tree plans the libcst pass and answers the whole-module questions after it: parsed once.
        tree = stdlib_tree(text) if STDLIB_PARSER_GUARDS_DEPTH else None
        return whole_module_facts(_read_parsed(source, has_bom, text, tree), text, tree)
    except (RecursionError, MemoryError) as err:  # pathological nesting: report, do not crash
        message = f"{source.path} is too deeply nested to analyse ({type(err).__name__})"
        return PythonModule(path=source.path, diagnostics=(Diagnostic("unanalysable-python", message, source.path),))


def whole_module_facts(module: PythonModule, text: str, tree: Optional[ast.Module]) -> PythonModule:
    """`module` with the facts read from the stdlib tree of the whole text (`tree`, or parsed here): what it
    defines, whether it calls `.backward()`, the functions it hands its parser to and whether it builds the parser
    it adds options to, and, when it calls them, what its Trainer classes are, whether it trains only
    `if ...do_train:`, whether parse_known_args' rest is read, and whether it wraps its model in peft adapters and
    makes the inputs require grad."""
    if tree is None and not any(d.kind in _NOT_ANALYSED for d in module.diagnostics):
        tree = stdlib_tree(text)  # only text libcst parsed: nesting that could overflow the parser is screened out
    nodes = tree_nodes(tree) if _asks_of_tree(module, text) else None
    calls_backward = ".backward(" in text and _calls_backward(nodes)
    mentions_train = _MENTIONS_TRAIN.search(text) is not None
    calls_predict = _CALLS_PREDICT.search(text) is not None
    helpers = parser_helpers(nodes) if module.argparse_args else ()
    parses = tree is not None and bool(module.argparse_args or module.hf_parsers)
    handed = namespace_helpers(nodes, parsed_namespace_names(tree)) if parses else ()
    # A python-fire function is a parser the module builds itself.
    builds = any(arg.owner == FIRE_OWNER for arg in module.argparse_args) or (
        bool(module.argparse_args) and builds_parser(nodes))
    module = replace(module, defines=_top_level_definitions(tree), calls_backward=calls_backward,
                     mentions_train=mentions_train, calls_predict=calls_predict,
                     parser_helpers=helpers, namespace_helpers=handed, builds_parser=builds,
                     refuses_abbreviations=builds and refuses_abbreviations(nodes))
    if module.parse_known_args and known_args_rest_used(nodes):
        module = replace(module, known_args_rest_used=True)
    if module.trainer_calls:
        module = replace(module, trainer_classes=_trainer_classes(nodes, module), train_gate=train_gate(nodes))
    if COPIED_LOOP in text and nodes is not None:
        module = replace(module, step_gates=forward_only_steps(nodes.classes))
    if nodes is not None and asks_about_adapters(text):
        module = replace(module, wraps_in_adapters=wraps_in_adapters(nodes),
                         inputs_require_grad=makes_inputs_require_grad(text, nodes))
    return module


def _asks_of_tree(module: PythonModule, text: str) -> bool:
    """Whether any question below needs the tree's nodes: most modules a job reaches (model code) ask none."""
    return ".backward(" in text or COPIED_LOOP in text or asks_about_adapters(text) or bool(
        module.argparse_args or module.hf_parsers or module.parse_known_args or module.trainer_calls)


# A `train` attribute or a lookup of one by name, wherever it is written (code, string or comment).
_MENTIONS_TRAIN = re.compile(r"""\.\s*train\b|getattr\([^)]*["']train["']""")
_CALLS_PREDICT = re.compile(r"\.\s*(?:predict|evaluate)\s*\(")

# Diagnostics of a file whose text was not parsed: the stdlib parser is not run on it either.
_NOT_ANALYSED = ("syntax-error", "unanalysable-python")


def _top_level_definitions(tree: Optional[ast.Module]) -> Tuple[str, ...]:
    if tree is None:
        return ()
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return tuple(node.name for node in tree.body if isinstance(node, kinds))


def _calls_backward(nodes: Optional[TreeNodes]) -> bool:
    return nodes is not None and any(isinstance(node.func, ast.Attribute) and node.func.attr == "backward"
                                     for node in nodes.calls)


def _trainer_classes(nodes: Optional[TreeNodes], module: PythonModule) -> Tuple[Tuple[str, Tuple[str, ...]], ...]:
    """The classes `module` defines under the names its Trainer calls use, and the bases of those it defines too,
    each with its bases as written."""
    if nodes is None:
        return ()
    defined = {}
    for node in nodes.classes:
        defined.setdefault(node.name, tuple(ast.unparse(base) for base in node.bases))
    found = []
    wanted = [call.callee.rsplit(".", 1)[-1] for call in module.trainer_calls]
    while wanted:
        name = wanted.pop()
        if name in defined and all(name != seen for seen, _bases in found):
            found.append((name, defined[name]))
            wanted.extend(base.rsplit(".", 1)[-1] for base in defined[name])
    return tuple(found)


def _read_parsed(source: SourceText, has_bom: bool, text: str, tree: Optional[ast.Module]) -> PythonModule:
    too_deep = too_deep_to_parse(text, tree)
    if too_deep is not None:
        start = ByteLocator(source, has_bom).offset(too_deep.line, 0)
        origin = source.origin(start, start)
        message = f"{origin}: {too_deep.reason}; the file is not analysed"
        return PythonModule(
            path=source.path, diagnostics=(Diagnostic("unanalysable-python", message, source.path, origin),)
        )
    plan = plan_module(text, tree) if tree is not None or not STDLIB_PARSER_GUARDS_DEPTH else None
    if plan is not None and plan.text != text:
        try:
            module = cst.parse_module(plan.text)
        except Exception:  # libcst rejects the reduced text: read the whole text, for its own verdict
            plan = None
        else:
            return _walk_planned(source, has_bom, module, plan)
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as err:
        return PythonModule(path=source.path, diagnostics=(_syntax_diagnostic(source, text, has_bom, err),))
    except Exception as err:  # libcst raises a few other types on odd input; never crash
        message = f"{source.path}: cannot parse as Python ({type(err).__name__}: {err})"
        return PythonModule(path=source.path, diagnostics=(Diagnostic("syntax-error", message, source.path),))
    if plan is None:
        return _walk_whole(source, has_bom, module, command_functions(tree, text))
    return _walk_planned(source, has_bom, module, plan)


def _walk_planned(source: SourceText, has_bom: bool, module: cst.Module, plan: Plan) -> PythonModule:
    screen = screen_module(plan, module)
    if screen is None:
        return _walk_whole(source, has_bom, module, plan.command_functions)
    return _walk_screened(source, has_bom, module, screen, plan)


def _walk_whole(source: SourceText, has_bom: bool, module: cst.Module, commands: FrozenSet[str]) -> PythonModule:
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    collector = Collector(Context(source, ByteLocator(source, has_bom), module, positions, command_functions=commands))
    module.visit(collector)
    return collector.result()


def _walk_screened(source: SourceText, has_bom: bool, module: cst.Module, screen: Screen, plan: Plan) -> PythonModule:
    """The collector's walk over the statements that can hold a setting only, with positions computed
    for the statements whose nodes become origins."""
    walkers: List[Collector] = []
    positions = StatementPositions(
        module, screen.anchors, lambda: ctx.parents, lambda: walkers[0].ancestors, lambda: ctx.seen_parents
    )
    ctx = Context(source, ByteLocator(source, has_bom), module, positions, screen.functions, plan.args_names,
                  screen.calling, plan.command_functions)
    collector = Collector(ctx, screen.skip)
    walkers.append(collector)
    collector.eval_data = ScreenedEvalData(collector.values, screen.eval_builders, positions)
    for statement, walk in zip(module.body, screen.walk):
        if walk:
            ctx.parents[statement] = module
            collector.walk(statement)
    return collector.result()


class ScreenedEvalData(EvalDataReader):
    """Looks for a returned `eval_dataset` entry only in the functions the screen says may build one."""

    def __init__(self, values, builders: FrozenSet[str], positions: StatementPositions):
        super().__init__(values)
        self._builders = builders
        self._positions = positions

    def returned_eval_datasets(self) -> Tuple[Tuple[str, Setting], ...]:
        found = []
        for name, function in self.ctx.functions.items():
            if name in self._builders and function is not None:
                self.ctx.seen_parents.setdefault(function, self.ctx.module)
                self._positions.walking(function)
                setting = self.returned_eval_dataset(function)
                if setting is not None:
                    found.append((name, setting))
        return tuple(found)


def _syntax_diagnostic(source: SourceText, text: str, has_bom: bool, err: cst.ParserSyntaxError) -> Diagnostic:
    """libcst's error positions are coarse; Python's own parser (parsing only, never compiling to
    run) pinpoints the offending character when it also rejects the text."""
    locator = ByteLocator(source, has_bom)
    line, column, message = err.raw_line, err.raw_column, err.message
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
    except SyntaxError as py_err:
        if py_err.lineno:
            line, column, message = py_err.lineno, max((py_err.offset or 1) - 1, 0), py_err.msg or message
    except Exception:  # ast may hit recursion limits; libcst's position is still usable
        pass
    start = locator.offset(line, column)
    end = locator.offset(line, column + 1)
    if end > len(source.data) or source.data[start:end] in (b"", b"\n", b"\r"):
        end = start  # the error is at the end of a line or of the file: an empty span
    origin = source.origin(start, end)
    return Diagnostic("syntax-error", f"{origin}: syntax error: {message.strip()}", source.path, origin)
