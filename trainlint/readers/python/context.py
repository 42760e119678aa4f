"""One parsed file with its positions, scopes, assignments and enclosing branches: the lookups every
extractor needs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, FrozenSet, Iterable, List, Optional, Sequence

import libcst as cst
from libcst.metadata import CodeRange

from trainlint.core import Origin
from trainlint.readers.python.expressions import CstExpr, is_main_guard, last_name, reads_flag
from trainlint.readers.python.positions import ByteLocator
from trainlint.readers.python.walk import children
from trainlint.readers.source import SourceText

# Methods whose result is the parsed namespace(s).
PARSE_METHODS = frozenset(
    {
        "parse_args",
        "parse_known_args",
        "parse_args_into_dataclasses",
        "parse_dict",
        "parse_json_file",
        "parse_yaml_file",
    }
)
MAX_REASON_CHARS = 80


@dataclass(frozen=True)
class Assignment:
    value: Optional[CstExpr]  # None when the name is bound by unpacking or another construct
    conditional: bool
    statement: cst.CSTNode
    unpacked_from: Optional[CstExpr] = None  # the right-hand side a tuple target takes its value from


@dataclass(frozen=True)
class Branch:
    """One enclosing branch of a statement: the `if` test and whether the statement is in its body
    (True) or its `else` (False). An `except` handler has no test and counts as a body."""

    test: Optional[CstExpr]
    in_body: bool

    def requires_flag(self, flag: str) -> bool:
        """True when the branch only runs if the flag `flag` is on (`if training_args.flag:`)."""
        if self.test is None:
            return False
        if not self.in_body:
            return (
                isinstance(self.test, cst.UnaryOperation)
                and isinstance(self.test.operator, cst.Not)
                and reads_flag(self.test.expression, flag)
            )
        return reads_flag(self.test, flag)


class Context:
    """One parsed file with its metadata and the lookups every extractor needs."""

    def __init__(
        self,
        source: SourceText,
        locator: ByteLocator,
        module: cst.Module,
        positions,
        functions: Optional[Dict[str, Optional[cst.FunctionDef]]] = None,
        args_names: Optional[FrozenSet[str]] = None,
        calling: Optional[FrozenSet[int]] = None,
        command_functions: FrozenSet[str] = frozenset(),
    ):
        """`functions` and `args_names` when the caller knows them without walking the module: a function
        libcst did not read (it holds nothing) is there by name, as None. `calling`: ids of the top-level
        statements that may call something, when known. `command_functions`: the top-level functions python-fire
        makes the command line of, whose parameters are parsed arguments."""
        self.source = source
        self.locator = locator
        self.module = module
        self.positions = positions
        # Filled by the collector as it walks down (libcst's ParentNodeProvider costs a whole extra
        # traversal); a node's ancestors are always recorded before the node is examined.
        self.parents: Dict[cst.CSTNode, cst.CSTNode] = {}
        # Parents met outside the collector's walk (in a scope's assignments), for positions only: `scope_of`
        # and `conditions` see the collector's walk alone, as they always have.
        self.seen_parents: Dict[cst.CSTNode, cst.CSTNode] = {}
        # The collector's path to the node it is examining, outermost first (shared with the collector): the
        # children of that node have no parent recorded yet.
        self.walk_path: List[cst.CSTNode] = []
        if functions is None:
            functions = {stmt.name.value: stmt for stmt in module.body if isinstance(stmt, cst.FunctionDef)}
        self.functions = functions
        if args_names is None:
            args_names = _parsed_namespace_names(module) if "parse_" in source.text else frozenset()
        self.args_names = args_names
        self.calling = calling
        self.command_functions = command_functions
        self._scope_assignments: Dict[int, Dict[str, List[Assignment]]] = {}

    # positions
    def origin(self, node: cst.CSTNode) -> Optional[Origin]:
        code_range: Optional[CodeRange] = self.positions.get(node)
        if code_range is None:
            return None
        start = self.locator.offset(code_range.start.line, code_range.start.column)
        end = self.locator.offset(code_range.end.line, code_range.end.column)
        return self.source.origin(start, max(start, end))

    def text(self, node: cst.CSTNode) -> str:
        origin = self.origin(node)
        if origin is None:
            return self.module.code_for_node(node).strip()
        return self.source.data[origin.start_byte : origin.end_byte].decode("utf-8", errors="replace")

    def short(self, node: cst.CSTNode) -> str:
        """The node's source on one line, shortened for messages."""
        flat = " ".join(self.text(node).split())
        return flat if len(flat) <= MAX_REASON_CHARS else flat[: MAX_REASON_CHARS - 3] + "..."

    # scopes
    def scope_of(self, node: cst.CSTNode) -> cst.CSTNode:
        current = self.parents.get(node)
        while current is not None and not isinstance(current, (cst.FunctionDef, cst.Module)):
            current = self.parents.get(current)
        return current if current is not None else self.module

    def enclosing(self, node: cst.CSTNode) -> List[cst.CSTNode]:
        """The nodes around `node`, innermost first: its recorded parents (the collector's, or a scope lookup's for
        a value bound where the collector did not walk) or, for a node below the one the walk is examining (a
        keyword's value of the call being read), the walk's path to that one."""
        def up(child: cst.CSTNode) -> Optional[cst.CSTNode]:
            return self.parents.get(child) or self.seen_parents.get(child)

        current = up(node)
        if current is None:
            return list(reversed(self.walk_path))
        chain = []
        while current is not None:
            chain.append(current)
            current = up(current)
        return chain

    def assignments(self, scope: cst.CSTNode, name: str) -> List[Assignment]:
        table = self._scope_assignments.get(id(scope))
        if table is None:
            collector = _AssignmentIndex(scope, self.seen_parents)
            collector.walk(scope)
            table = collector.table
            self._scope_assignments[id(scope)] = table
        return table.get(name, [])

    def conditions(self, node: cst.CSTNode, bound: bool = False) -> List[Branch]:
        """Enclosing branches within the node's function, innermost first. `bound`: the node is a binding a
        scope lookup found (`assignments`), whose parents that walk met."""
        found: List[Branch] = []

        def up(child: cst.CSTNode) -> Optional[cst.CSTNode]:
            parent = self.parents.get(child)
            return self.seen_parents.get(child) if parent is None and bound else parent

        child, parent = node, up(node)
        while parent is not None and not isinstance(parent, (cst.FunctionDef, cst.Lambda, cst.Module)):
            if isinstance(parent, cst.If) and not is_main_guard(parent.test):
                if child is parent.body:
                    found.append(Branch(parent.test, True))
                elif child is parent.orelse:
                    found.append(Branch(parent.test, False))
            elif isinstance(parent, cst.ExceptHandler) and child is parent.body:
                found.append(Branch(None, True))
            child, parent = parent, up(parent)
        return found


class _AssignmentIndex:
    """Name -> assignments in one function (or module) body, skipping nested functions and classes."""

    def __init__(self, scope: cst.CSTNode, parents: Dict[cst.CSTNode, cst.CSTNode]):
        self._scope = scope
        self._branch_depth = 0
        self.table: Dict[str, List[Assignment]] = {}
        # The parents met on the way, as the collector records them: the positions of a value bound in a
        # statement the collector did not walk are then found from the statement around it.
        self._parents = parents

    def walk(self, node: cst.CSTNode, parent: Optional[cst.CSTNode] = None) -> None:
        if parent is not None:
            self._parents.setdefault(node, parent)
        if isinstance(node, (cst.ClassDef, cst.Lambda)):
            return
        if isinstance(node, cst.FunctionDef) and node is not self._scope:
            return
        depth = self._branch_opened(node)
        self._branch_depth += depth
        self._bind_statement(node)
        for child in children(node):
            self.walk(child, node)
        self._branch_depth -= depth

    @staticmethod
    def _branch_opened(node: cst.CSTNode) -> int:
        # The main guard always runs when the file is the entry point: it is not a branch.
        if isinstance(node, cst.If):
            return 0 if is_main_guard(node.test) else 1
        return 1 if isinstance(node, (cst.For, cst.While, cst.Try, cst.ExceptHandler)) else 0

    def _bind_statement(self, node: cst.CSTNode) -> None:
        if isinstance(node, cst.Assign):
            for target in node.targets:
                self._bind(target.target, node.value, node)
        elif isinstance(node, cst.For):
            self._bind(node.target, None, node)
        elif isinstance(node, cst.With):
            for item in node.items:
                if item.asname is not None:
                    self._bind(item.asname.name, None, node)
        elif isinstance(node, cst.AnnAssign):
            if node.value is not None:
                self._bind(node.target, node.value, node)
        elif isinstance(node, cst.AugAssign):
            self._bind(node.target, None, node)

    def _bind(self, target: cst.BaseExpression, value: Optional[CstExpr], statement: cst.CSTNode) -> None:
        if isinstance(target, cst.Name):
            record = Assignment(value, self._branch_depth > 0, statement)
            self.table.setdefault(target.value, []).append(record)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._unpack(element.value, value, statement)

    def _unpack(self, target: cst.BaseExpression, source: Optional[CstExpr], statement: cst.CSTNode) -> None:
        if isinstance(target, cst.Name):
            record = Assignment(None, self._branch_depth > 0, statement, source)
            self.table.setdefault(target.value, []).append(record)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._unpack(element.value, source, statement)


def _parsed_namespace_names(module: cst.Module) -> frozenset:
    """Names bound from a parse call: `args = parser.parse_args()`, `args, rest = ...parse_known_args()`,
    `model_args, data_args, training_args = parser.parse_args_into_dataclasses()`."""
    names = set()
    for small in _small_statements(module.body):
        if not isinstance(small, cst.Assign):
            continue
        method = _parse_method(small.value)
        if method is None:
            continue
        for target in small.targets:
            names.update(_bound_names(target.target, first_only=(method == "parse_known_args")))
    return frozenset(names)


def _small_statements(nodes: Sequence[cst.CSTNode]) -> Iterable[cst.BaseSmallStatement]:
    """Every simple statement in these statements and the blocks below them, without walking into
    expressions (a full visit costs as much as the parse)."""
    for node in nodes:
        if isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            yield from node.body
        elif isinstance(node, cst.IndentedBlock):
            yield from _small_statements(node.body)
        else:
            for part in ("body", "orelse", "handlers", "finalbody", "cases"):
                child = getattr(node, part, None)
                if isinstance(child, (list, tuple)):
                    yield from _small_statements(child)
                elif isinstance(child, cst.CSTNode):
                    yield from _small_statements((child,))


def _parse_method(value: CstExpr) -> Optional[str]:
    if not isinstance(value, cst.Call):
        return None
    name = last_name(value.func)
    return name if name in PARSE_METHODS else None


def _bound_names(target: cst.BaseExpression, first_only: bool) -> List[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        elements = [element.value for element in target.elements]
        if first_only:
            elements = elements[:1]
        return [element.value for element in elements if isinstance(element, cst.Name)]
    return []


def describe_binding(ctx: Context, binding: Assignment) -> str:
    if binding.value is not None:
        return f"`{ctx.short(binding.value)}`"
    if binding.unpacked_from is not None:
        return f"a part of `{ctx.short(binding.unpacked_from)}`"
    return "in a loop or `with` statement"


def condition_reason(ctx: Context, branch: Branch) -> str:
    test, in_body = branch.test, branch.in_body
    if test is None:
        return "conditional on an exception being raised"
    written = ctx.short(test)
    return f"conditional on `{written}`" if in_body else f"conditional on `not ({written})`"


def empty_origin(source: SourceText) -> Origin:
    return source.origin(0, 0)
