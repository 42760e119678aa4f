"""Python entry scripts, read without importing or running them.

libcst parses the text; its position metadata (lines, character columns) is turned into exact byte
offsets of the raw file, so every value keeps the origin of the token it is written in. The reader
collects what decides a training job's settings: argument dataclasses and their defaults, argparse
defaults, `HfArgumentParser` wiring, `TrainingArguments(...)`-style calls, `Trainer(...)` calls
(is there an eval dataset?), settings changed in code after parsing, imports and what runs under
`if __name__ == "__main__":`.
"""

from __future__ import annotations

import ast
import codecs
import io
import os
import re
import tokenize
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from trainlint.core import Diagnostic, Origin, Setting, SourceKind, Unknown, Value
from trainlint.readers.facts import (
    ConfigCall,
    DataclassInfo,
    FieldDefault,
    ImportInfo,
    Keyword,
    Override,
    PythonModule,
    TrainerCall,
)
from trainlint.readers.source import SourceText, read_source

__all__ = ["read_python", "resolve_import"]

# Calls whose keywords are TrainingArguments fields (HF and TRL config classes).
TRL_CONFIGS = frozenset(
    {
        "SFTConfig",
        "DPOConfig",
        "GRPOConfig",
        "PPOConfig",
        "RewardConfig",
        "ORPOConfig",
        "KTOConfig",
        "CPOConfig",
        "RLOOConfig",
        "OnlineDPOConfig",
        "GKDConfig",
        "PRMConfig",
        "XPOConfig",
        "NashMDConfig",
        "BCOConfig",
        "IterativeSFTConfig",
    }
)
# Calls outside the trainer config whose keywords pin a knob, by callee name (last component).
OTHER_CALL_KEYWORDS: Mapping[str, Tuple[str, ...]] = {
    "Accelerator": ("gradient_accumulation_steps", "mixed_precision"),
    "DataLoader": ("batch_size",),
    "from_pretrained": ("attn_implementation", "torch_dtype", "dtype", "load_in_4bit", "load_in_8bit"),
    "BitsAndBytesConfig": ("load_in_4bit", "load_in_8bit"),
    "LoraConfig": ("r",),
}
HF_PARSERS = frozenset({"HfArgumentParser", "TrlParser"})
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
# Names that hold parsed arguments by convention, even when the parse happens elsewhere.
CONVENTIONAL_ARGS_NAME = re.compile(r"^(args|opt|opts|hparams|\w+_args|\w+_arguments)$")
TORCH_DTYPES = frozenset({"float16", "half", "bfloat16", "float32", "float", "float64", "double"})
MAX_REASON_CHARS = 80
# libcst's native parser overflows its stack (a segmentation fault, not an exception) on very deep
# syntax trees: thousands of chained operators or nested brackets. Such text is screened first.
MAX_CHAIN_TOKENS = 2000  # operators and call/subscript trailers in one statement
MAX_BRACKET_DEPTH = 100  # below CPython's own tokenizer limit (200), which 3.12+ raises before we count it
MAX_ELIF = 2000
CHAIN_OPERATORS = frozenset(
    {
        "+",
        "-",
        "*",
        "/",
        "//",
        "%",
        "**",
        "@",
        "<<",
        ">>",
        "&",
        "|",
        "^",
        "~",
        ".",
        "and",
        "or",
        "not",
        "lambda",
        "if",
        "else",
        "await",
    }
)

CstExpr = cst.BaseExpression


# ---------------------------------------------------------------- public API
def read_python(path: Union[str, Path]) -> PythonModule:
    """Everything trainlint needs from one Python file. Never raises, never runs the file."""
    source = read_source(path)
    if isinstance(source, Diagnostic):
        return PythonModule(path=source.path, diagnostics=(source,))
    try:
        return _read_parsed(source)
    except (RecursionError, MemoryError) as err:  # pathological nesting: report, do not crash
        message = f"{source.path} is too deeply nested to analyse ({type(err).__name__})"
        return PythonModule(path=source.path, diagnostics=(Diagnostic("unanalysable-python", message, source.path),))


def resolve_import(module: str, importer_path: str, search_roots: List[str]) -> Optional[str]:
    """The .py file (module file or package `__init__.py`) a dotted module name refers to, or None.

    Relative names (leading dots) are looked up from the importer's package directory; absolute
    names in each of `search_roots` in order. Python also puts a script's own directory first on
    `sys.path`: callers resolving imports of an entry script run as `python dir/train.py` should
    include `dir` in `search_roots`. `from . import x` refers to the package (`__init__.py`); resolve
    `.x` to find a submodule `x`."""
    dots = len(module) - len(module.lstrip("."))
    remainder = module[dots:]
    parts = remainder.split(".") if remainder else []
    if not all(part.isidentifier() for part in parts) or (not parts and not dots):
        return None
    if dots:
        base = Path(importer_path).parent
        for _ in range(dots - 1):
            base = base.parent
        return _module_file(base, parts)
    for root in search_roots:
        found = _module_file(Path(root), parts)
        if found is not None:
            return found
    return None


def _module_file(base: Path, parts: Sequence[str]) -> Optional[str]:
    target = base.joinpath(*parts) if parts else base
    candidates = (
        [target / "__init__.py"] if not parts else [target.with_name(target.name + ".py"), target / "__init__.py"]
    )
    for candidate in candidates:
        try:
            if candidate.is_file():
                return os.path.normpath(str(candidate))
        except OSError:
            continue
    return None


# ---------------------------------------------------------------- parsing and positions
def _read_parsed(source: SourceText) -> PythonModule:
    has_bom = source.text.startswith("\ufeff")
    text = source.text[1:] if has_bom else source.text
    too_deep = _too_deep_to_parse(text)
    if too_deep is not None:
        line, reason = too_deep
        start = _ByteLocator(source, has_bom).offset(line, 0)
        origin = source.origin(start, start)
        message = f"{origin}: {reason}; the file is not analysed"
        return PythonModule(
            path=source.path, diagnostics=(Diagnostic("unanalysable-python", message, source.path, origin),)
        )
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as err:
        return PythonModule(path=source.path, diagnostics=(_syntax_diagnostic(source, text, has_bom, err),))
    except Exception as err:  # libcst raises a few other types on odd input; never crash
        message = f"{source.path}: cannot parse as Python ({type(err).__name__}: {err})"
        return PythonModule(path=source.path, diagnostics=(Diagnostic("syntax-error", message, source.path),))
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    ctx = _Context(source, _ByteLocator(source, has_bom), module, positions)
    collector = _Collector(ctx)
    module.visit(collector)
    return collector.result()


def _too_deep_to_parse(text: str) -> Optional[Tuple[int, str]]:
    """(line, reason) when the text nests deeper than libcst can parse safely, else None."""
    chain = depth = elifs = 0
    previous: Optional[tokenize.TokenInfo] = None
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.NEWLINE:
                chain = 0
            elif tok.type == tokenize.OP and tok.string in "([{":
                depth += 1
                if previous is not None and _ends_operand(previous) and tok.string != "{":
                    chain += 1  # a call or subscript trailer: `f()()()` nests like an operator chain
            elif tok.type == tokenize.OP and tok.string in ")]}":
                depth -= 1
            elif tok.string in CHAIN_OPERATORS and tok.type in (tokenize.OP, tokenize.NAME):
                chain += 1
            elif tok.type == tokenize.STRING and previous is not None and previous.type == tokenize.STRING:
                chain += 1  # implicit concatenation is a nested node in libcst
            elif tok.type == tokenize.NAME and tok.string == "elif":
                elifs += 1
            if depth > MAX_BRACKET_DEPTH:
                return tok.start[0], f"brackets nested more than {MAX_BRACKET_DEPTH} deep"
            if chain > MAX_CHAIN_TOKENS:
                return tok.start[0], f"a statement chains more than {MAX_CHAIN_TOKENS} operators"
            if elifs > MAX_ELIF:
                return tok.start[0], f"more than {MAX_ELIF} `elif` branches"
            if tok.type not in (tokenize.NL, tokenize.COMMENT):
                previous = tok
    except (tokenize.TokenError, SyntaxError, ValueError):
        pass  # the parser reports the broken text itself
    return None


def _ends_operand(tok: tokenize.TokenInfo) -> bool:
    if tok.type == tokenize.NAME:
        return tok.string not in _KEYWORDS
    return tok.type == tokenize.STRING or (tok.type == tokenize.OP and tok.string in ")]")


_KEYWORDS = frozenset(
    {
        "and",
        "or",
        "not",
        "in",
        "is",
        "if",
        "else",
        "elif",
        "for",
        "while",
        "return",
        "yield",
        "lambda",
        "import",
        "from",
        "as",
        "with",
        "assert",
        "del",
        "global",
        "nonlocal",
        "raise",
        "try",
        "except",
        "finally",
        "class",
        "def",
        "pass",
        "break",
        "continue",
        "await",
        "async",
        "print",
    }
)


def _syntax_diagnostic(source: SourceText, text: str, has_bom: bool, err: cst.ParserSyntaxError) -> Diagnostic:
    """libcst's error positions are coarse; Python's own parser (parsing only, never compiling to
    run) pinpoints the offending character when it also rejects the text."""
    locator = _ByteLocator(source, has_bom)
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


class _ByteLocator:
    """Turns libcst (line, character column) positions into byte offsets of the raw file.

    Lines are split like libcst splits them (`\\r\\n`, `\\r`, `\\n`). A line's characters are the
    UTF-8 decoding of its bytes with invalid bytes replaced, as in SourceText, so offsets stay
    exact for non-UTF-8 files too."""

    def __init__(self, source: SourceText, has_bom: bool):
        self._data = source.data
        self._bom_bytes = 3 if has_bom else 0
        self._line_starts = [0] + [match.end() for match in re.finditer(rb"\r\n|\r|\n", source.data)]
        self._char_starts: Dict[int, List[int]] = {}

    def offset(self, line: int, column: int) -> int:
        if line < 1:
            return 0
        if line > len(self._line_starts):
            return len(self._data)
        start = self._line_starts[line - 1] + (self._bom_bytes if line == 1 else 0)
        end = self._line_end(line)
        line_bytes = self._data[start:end]
        if line_bytes.isascii():
            return start + column
        starts = self._char_starts.get(line)
        if starts is None:
            starts = _char_byte_starts(line_bytes)
            self._char_starts[line] = starts
        if column < len(starts):
            return start + starts[column]
        return end + (column - len(starts))  # past the line's text: newline characters are one byte

    def _line_end(self, line: int) -> int:
        if line < len(self._line_starts):
            next_start = self._line_starts[line]
            newline = 2 if self._data[next_start - 2 : next_start] == b"\r\n" else 1
            return next_start - newline
        return len(self._data)


def _char_byte_starts(line_bytes: bytes) -> List[int]:
    """Byte offset where each decoded character of a line starts (replacement characters included)."""
    try:
        text = line_bytes.decode("utf-8")
    except UnicodeDecodeError:
        return _char_byte_starts_lossy(line_bytes)
    starts, offset = [], 0
    for char in text:
        starts.append(offset)
        offset += len(char.encode("utf-8", errors="surrogatepass"))
    return starts


def _char_byte_starts_lossy(line_bytes: bytes) -> List[int]:
    # Feed the bytes one by one to the same decoder SourceText uses: each output character starts
    # where the decoder's pending bytes began (or at the current byte for the second of two).
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    starts: List[int] = []
    for index in range(len(line_bytes)):
        pending = len(decoder.getstate()[0])
        produced = decoder.decode(line_bytes[index : index + 1])
        if produced:
            starts.append(index - pending)
            starts.extend([index] * (len(produced) - 1))
    pending = len(decoder.getstate()[0])
    produced = decoder.decode(b"", final=True)
    if produced:
        starts.append(len(line_bytes) - pending)
        starts.extend([len(line_bytes)] * (len(produced) - 1))
    return starts


# ---------------------------------------------------------------- shared context
@dataclass(frozen=True)
class _Assignment:
    value: Optional[CstExpr]  # None when the name is bound by unpacking or another construct
    conditional: bool
    statement: cst.CSTNode
    unpacked_from: Optional[CstExpr] = None  # the right-hand side a tuple target takes its value from


class _Context:
    """One parsed file with its metadata and the lookups every extractor needs."""

    def __init__(self, source: SourceText, locator: _ByteLocator, module: cst.Module, positions):
        self.source = source
        self.locator = locator
        self.module = module
        self.positions = positions
        # Filled by the collector as it walks down (libcst's ParentNodeProvider costs a whole extra
        # traversal); a node's ancestors are always recorded before the node is examined.
        self.parents: Dict[cst.CSTNode, cst.CSTNode] = {}
        self.functions = {stmt.name.value: stmt for stmt in module.body if isinstance(stmt, cst.FunctionDef)}
        self.args_names = _parsed_namespace_names(module) if "parse_" in source.text else frozenset()
        self._scope_assignments: Dict[int, Dict[str, List[_Assignment]]] = {}

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

    def assignments(self, scope: cst.CSTNode, name: str) -> List[_Assignment]:
        table = self._scope_assignments.get(id(scope))
        if table is None:
            collector = _AssignmentIndex(scope)
            scope.visit(collector)
            table = collector.table
            self._scope_assignments[id(scope)] = table
        return table.get(name, [])

    def conditions(self, node: cst.CSTNode) -> List[Tuple[Optional[CstExpr], bool]]:
        """Enclosing branches within the node's function, innermost first: (if-test, in body).
        An `except` handler gives (None, True)."""
        found: List[Tuple[Optional[CstExpr], bool]] = []
        child, parent = node, self.parents.get(node)
        while parent is not None and not isinstance(parent, (cst.FunctionDef, cst.Lambda, cst.Module)):
            if isinstance(parent, cst.If) and not _is_main_guard(parent.test):
                if child is parent.body:
                    found.append((parent.test, True))
                elif child is parent.orelse:
                    found.append((parent.test, False))
            elif isinstance(parent, cst.ExceptHandler) and child is parent.body:
                found.append((None, True))
            child, parent = parent, self.parents.get(parent)
        return found


class _AssignmentIndex(cst.CSTVisitor):
    """Name -> assignments in one function (or module) body, skipping nested functions and classes."""

    def __init__(self, scope: cst.CSTNode):
        super().__init__()
        self._scope = scope
        self._branch_depth = 0
        self.table: Dict[str, List[_Assignment]] = {}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return node is self._scope

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def _enter_branch(self, node) -> None:
        self._branch_depth += 1

    def _leave_branch(self, node) -> None:
        self._branch_depth -= 1

    # The main guard always runs when the file is the entry point: it is not a branch.
    def visit_If(self, node: cst.If) -> None:
        self._branch_depth += 0 if _is_main_guard(node.test) else 1

    def leave_If(self, node: cst.If) -> None:
        self._branch_depth -= 0 if _is_main_guard(node.test) else 1

    visit_While = visit_Try = visit_ExceptHandler = _enter_branch  # type: ignore[assignment]
    leave_For = leave_While = leave_Try = leave_ExceptHandler = _leave_branch  # type: ignore[assignment]

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bind(target.target, node.value, node)

    def visit_For(self, node: cst.For) -> None:
        self._branch_depth += 1
        self._bind(node.target, None, node)

    def visit_With(self, node: cst.With) -> None:
        for item in node.items:
            if item.asname is not None:
                self._bind(item.asname.name, None, node)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bind(node.target, node.value, node)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind(node.target, None, node)

    def _bind(self, target: cst.BaseExpression, value: Optional[CstExpr], statement: cst.CSTNode) -> None:
        if isinstance(target, cst.Name):
            record = _Assignment(value, self._branch_depth > 0, statement)
            self.table.setdefault(target.value, []).append(record)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._unpack(element.value, value, statement)

    def _unpack(self, target: cst.BaseExpression, source: Optional[CstExpr], statement: cst.CSTNode) -> None:
        if isinstance(target, cst.Name):
            record = _Assignment(None, self._branch_depth > 0, statement, source)
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
    name = _last_name(value.func)
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


# ---------------------------------------------------------------- expressions
class _NotLiteral:
    """Marker: the expression is not a constant."""


NOT_LITERAL = _NotLiteral()


def literal_value(node: CstExpr) -> Union[Value, _NotLiteral]:
    """A Python constant (int, float, bool, str, None; signed numbers; arithmetic on numbers)."""
    try:
        return _literal(node)
    except (ArithmeticError, ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return NOT_LITERAL


def _literal(node: CstExpr) -> Union[Value, _NotLiteral]:
    if isinstance(node, (cst.Integer, cst.Float)):
        return ast.literal_eval(node.value)
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        value = node.evaluated_value
        return value if isinstance(value, str) else NOT_LITERAL
    if isinstance(node, cst.Name):
        return {"True": True, "False": False, "None": None}.get(node.value, NOT_LITERAL)
    if isinstance(node, cst.UnaryOperation):
        operand = _literal(node.expression)
        if _is_number(operand) and isinstance(node.operator, cst.Minus):
            return -operand  # type: ignore[operator]
        if _is_number(operand) and isinstance(node.operator, cst.Plus):
            return +operand  # type: ignore[operator]
        return NOT_LITERAL
    if isinstance(node, cst.BinaryOperation):
        return _arithmetic(node)
    return NOT_LITERAL


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _arithmetic(node: cst.BinaryOperation) -> Union[Value, _NotLiteral]:
    left, right = _literal(node.left), _literal(node.right)
    operator = node.operator
    if isinstance(left, str) and isinstance(right, str) and isinstance(operator, cst.Add):
        return left + right
    if not (_is_number(left) and _is_number(right)):
        return NOT_LITERAL
    if isinstance(operator, cst.Power):
        # Keep evaluation cheap: constants like 2**10 or 1e-4*2**3, nothing astronomical.
        if abs(right) > 64 or abs(left) > 2**20:  # type: ignore[arg-type]
            return NOT_LITERAL
        return left**right  # type: ignore[operator]
    operations = {
        cst.Add: lambda a, b: a + b,
        cst.Subtract: lambda a, b: a - b,
        cst.Multiply: lambda a, b: a * b,
        cst.Divide: lambda a, b: a / b,
        cst.FloorDivide: lambda a, b: a // b,
        cst.Modulo: lambda a, b: a % b,
    }
    for operator_type, apply in operations.items():
        if isinstance(operator, operator_type):
            return apply(left, right)
    return NOT_LITERAL


def _dotted(node: cst.BaseExpression) -> Optional[str]:
    """`a.b.c` for a Name/Attribute chain, else None."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr.value}" if head is not None else None
    return None


def _last_name(node: cst.BaseExpression) -> Optional[str]:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return None


def _keyword_args(call: cst.Call) -> Dict[str, cst.Arg]:
    return {arg.keyword.value: arg for arg in call.args if arg.keyword is not None}


def _is_main_guard(test: CstExpr) -> bool:
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    target = test.comparisons[0]
    if not isinstance(target.operator, cst.Equal):
        return False
    sides = [test.left, target.comparator]
    names = [side for side in sides if isinstance(side, cst.Name) and side.value == "__name__"]
    mains = [side for side in sides if literal_value(side) == "__main__"]
    return bool(names) and bool(mains)


def _test_requires_flag(test: Optional[CstExpr], in_body: bool, flag: str) -> bool:
    """True when the branch only runs if the flag `flag` is on (`if training_args.flag:`)."""
    if test is None:
        return False
    if not in_body:
        return (
            isinstance(test, cst.UnaryOperation)
            and isinstance(test.operator, cst.Not)
            and _reads_flag(test.expression, flag)
        )
    return _reads_flag(test, flag)


def _reads_flag(test: CstExpr, flag: str) -> bool:
    if isinstance(test, cst.Attribute):
        return test.attr.value == flag
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return _reads_flag(test.left, flag) or _reads_flag(test.right, flag)
    if isinstance(test, cst.Call) and _last_name(test.func) == "getattr" and len(test.args) >= 2:
        return literal_value(test.args[1].value) == flag
    return False


# ---------------------------------------------------------------- the collector
class _Collector(cst.CSTVisitor):
    def __init__(self, ctx: _Context):
        super().__init__()
        self.ctx = ctx
        self.dataclasses: List[DataclassInfo] = []
        self.argparse_args: List[FieldDefault] = []
        self.hf_parsers: List[Tuple[str, ...]] = []
        self.config_calls: List[ConfigCall] = []
        self.trainer_calls: List[TrainerCall] = []
        self.overrides: List[Override] = []
        self.imports: List[ImportInfo] = []
        self.other_keywords: List[Tuple[str, Keyword]] = []
        self.diagnostics: List[Diagnostic] = []
        self.parse_known_args = False
        self._ancestors: List[cst.CSTNode] = []
        self._attention: List[Tuple[str, CstExpr]] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self._ancestors:
            self.ctx.parents[node] = self._ancestors[-1]
        self._ancestors.append(node)
        return super().on_visit(node)

    def on_leave(self, original_node: cst.CSTNode) -> None:
        super().on_leave(original_node)
        self._ancestors.pop()

    def result(self) -> PythonModule:
        return PythonModule(
            path=self.ctx.source.path,
            dataclasses=tuple(self.dataclasses),
            argparse_args=tuple(self.argparse_args),
            hf_parsers=tuple(self.hf_parsers),
            config_calls=tuple(self.config_calls),
            trainer_calls=tuple(self.trainer_calls),
            overrides=tuple(self.overrides),
            imports=tuple(self.imports),
            main_calls=_main_calls(self.ctx),
            parse_known_args=self.parse_known_args,
            other_keywords=tuple(self.other_keywords) + tuple(self.attention_keywords()),
            diagnostics=tuple(self.diagnostics),
            returned_eval_datasets=self.returned_eval_datasets(),
        )

    # ------------------------------------------------ settings from expressions
    def keyword(self, name: str, value: CstExpr, kind: SourceKind, note: str) -> Keyword:
        """A keyword value: a constant, a reference to a parsed argument, or an opaque expression."""
        ctx = self.ctx
        origin, text = ctx.origin(value), ctx.text(value)
        literal = literal_value(value)
        if not isinstance(literal, _NotLiteral):
            return Keyword(name, Setting(literal, kind, origin, text, note=note))
        dotted = _dotted(value)
        if (
            dotted is not None
            and dotted.startswith("torch.")
            and dotted.split(".")[-1] in TORCH_DTYPES
            and dotted.count(".") == 1
        ):
            return Keyword(name, Setting(dotted, kind, origin, text, note=note))
        negated = False
        inner = value
        if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Not):
            negated, inner = True, value.expression
        reference = self.argument_reference(inner)
        if reference is not None:
            reason = f"from {'not ' if negated else ''}{_dotted(inner)}"
            return Keyword(name, Setting(Unknown(reason), kind, origin, text, note=note), reference, negated)
        return Keyword(name, Setting(Unknown(f"expression `{ctx.short(value)}`"), kind, origin, text, note=note))

    def argument_reference(self, node: CstExpr) -> Optional[str]:
        """`args.eval_iters` -> "eval_iters" when `args` holds parsed arguments."""
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and self.is_args_name(node.value.value):
            return node.attr.value
        return None

    def is_args_name(self, name: str) -> bool:
        return name in self.ctx.args_names or bool(CONVENTIONAL_ARGS_NAME.match(name))

    def optional_value(self, value: CstExpr, kind: SourceKind, note: str) -> Setting:
        """A dataset-like value: literal None, a local variable that is only ever None, or opaque."""
        ctx = self.ctx
        literal = literal_value(value)
        if literal is None:
            return Setting(None, kind, ctx.origin(value), ctx.text(value), note=note)
        if isinstance(value, cst.Name) and isinstance(literal, _NotLiteral):
            resolved = self.resolve_in_scope(value, ctx.scope_of(value), note)
            if resolved is not None:
                return resolved
        return Setting(Unknown(f"expression `{ctx.short(value)}`"), kind, ctx.origin(value), ctx.text(value), note=note)

    # ------------------------------------------------ classes
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if not any(_is_dataclass_decorator(decorator.decorator) for decorator in node.decorators):
            return
        ctx = self.ctx
        class_name = node.name.value
        bases = tuple(ctx.text(arg.value) for arg in node.bases if arg.keyword is None and not arg.star)
        fields = [self.dataclass_field(class_name, statement) for statement in _class_annotations(node)]
        origin = ctx.origin(node.name) or _empty_origin(ctx.source)
        self.dataclasses.append(DataclassInfo(class_name, bases, tuple(f for f in fields if f is not None), origin))

    def dataclass_field(self, class_name: str, statement: cst.AnnAssign) -> Optional[FieldDefault]:
        if not isinstance(statement.target, cst.Name):
            return None
        ctx = self.ctx
        name = statement.target.value
        type_name = ctx.text(statement.annotation.annotation)
        if type_name.startswith(("ClassVar", "typing.ClassVar")):
            return None
        note = f"{class_name}.{name}"
        default = None
        if statement.value is not None:
            default = self.field_default(statement.value, note)
        origin = ctx.origin(statement)
        return FieldDefault(name, default, class_name, (), type_name, origin)

    def field_default(self, value: CstExpr, note: str) -> Optional[Setting]:
        kind = SourceKind.DATACLASS_DEFAULT
        if not _is_field_call(value):
            return self.keyword("", value, kind, note).setting
        keywords = _keyword_args(value)  # type: ignore[arg-type]
        if "default" in keywords:
            return self.keyword("", keywords["default"].value, kind, note).setting
        if "default_factory" in keywords:
            return self.factory_default(keywords["default_factory"].value, note)
        return None  # field(metadata=...) alone: a required field

    def factory_default(self, factory: CstExpr, note: str) -> Setting:
        ctx = self.ctx
        kind = SourceKind.DATACLASS_DEFAULT
        if isinstance(factory, cst.Lambda) and not factory.params.params:
            body_literal = literal_value(factory.body)
            if not isinstance(body_literal, _NotLiteral):
                return Setting(body_literal, kind, ctx.origin(factory.body), ctx.text(factory.body), note=note)
        reason = f"default_factory `{ctx.short(factory)}`"
        return Setting(Unknown(reason), kind, ctx.origin(factory), ctx.text(factory), note=note)

    # ------------------------------------------------ calls
    def visit_Call(self, node: cst.Call) -> None:
        callee = _last_name(node.func)
        if callee is None:
            return
        if callee == "add_argument" and isinstance(node.func, cst.Attribute):
            self.argparse_argument(node)
        elif callee == "parse_known_args":
            self.parse_known_args = True
        elif callee == "parse_args_into_dataclasses":
            remaining = _keyword_args(node).get("return_remaining_strings")
            if remaining is not None and literal_value(remaining.value) is True:
                self.parse_known_args = True
        elif callee in HF_PARSERS:
            self.hf_parser(node)
        elif callee.endswith("TrainingArguments") or callee in TRL_CONFIGS:
            self.config_call(node)
        elif callee.endswith("Trainer"):
            self.trainer_call(node)
        elif callee in ("gradient_checkpointing_enable", "gradient_checkpointing_disable") and isinstance(
            node.func, cst.Attribute
        ):
            self.checkpointing_call(node, callee == "gradient_checkpointing_enable")
        elif callee == "_set_gradient_checkpointing" and isinstance(node.func, cst.Attribute):
            # transformers' internal switch (called directly by some model code): on unless told
            # `value=False` / `enable=False`.
            switches = [
                literal_value(arg.value) for name, arg in _keyword_args(node).items() if name in ("value", "enable")
            ]
            self.checkpointing_call(node, not any(v is False for v in switches))
        elif callee == "prepare_model_for_kbit_training":
            self.kbit_preparation(node)
        elif callee == "get_peft_model":
            self.peft_call(node)
        if callee in OTHER_CALL_KEYWORDS:
            self.knob_keywords(node, callee)

    def argparse_argument(self, node: cst.Call) -> None:
        ctx = self.ctx
        names = [literal_value(arg.value) for arg in node.args if arg.keyword is None and not arg.star]
        if not names or not all(isinstance(name, str) for name in names):
            return
        options = tuple(str(name) for name in names)
        keywords = _keyword_args(node)
        dest = _argparse_dest(options, keywords)
        if dest is None:
            return
        note = f"argparse {options[0]}"
        kind = SourceKind.ARGPARSE_DEFAULT
        action_arg = keywords.get("action")
        action = literal_value(action_arg.value) if action_arg is not None else None
        type_name = ctx.text(keywords["type"].value) if "type" in keywords else ""
        default: Optional[Setting] = None
        if "default" in keywords:
            default = self.keyword(dest, keywords["default"].value, kind, note).setting
        elif action in ("store_true", "store_false") and action_arg is not None:
            implied = action == "store_false"
            default = Setting(
                implied,
                kind,
                ctx.origin(action_arg.value),
                ctx.text(action_arg.value),
                note=f"{note} (implied by {action})",
            )
        if action in ("store_true", "store_false") and not type_name:
            type_name = "bool"
        self.argparse_args.append(FieldDefault(dest, default, "argparse", options, type_name, ctx.origin(node)))

    def hf_parser(self, node: cst.Call) -> None:
        keywords = _keyword_args(node)
        positional = [arg for arg in node.args if arg.keyword is None and not arg.star]
        types_arg = positional[0] if positional else keywords.get("dataclass_types")
        if types_arg is None:
            return
        value = types_arg.value
        if isinstance(value, (cst.Tuple, cst.List)):
            names = tuple(self.ctx.text(element.value) for element in value.elements)
        else:
            names = (self.ctx.text(value),)
        self.hf_parsers.append(names)

    def config_call(self, node: cst.Call) -> None:
        ctx = self.ctx
        callee = ctx.text(node.func)
        keywords = []
        for arg in node.args:
            if arg.keyword is not None:
                note = f"{callee}({arg.keyword.value}=...)"
                keywords.append(self.keyword(arg.keyword.value, arg.value, SourceKind.CODE_KEYWORD, note))
            elif arg.star:
                origin = ctx.origin(arg)
                message = f"{origin}: `{ctx.short(arg)}` passes keywords to {callee} that cannot be read statically"
                self.diagnostics.append(Diagnostic("config-call-splat", message, ctx.source.path, origin))
        self.config_calls.append(ConfigCall(callee, tuple(keywords), ctx.origin(node) or _empty_origin(ctx.source)))

    def trainer_call(self, node: cst.Call) -> None:
        ctx = self.ctx
        callee = ctx.text(node.func)
        keywords = _keyword_args(node)
        kind = SourceKind.CODE_KEYWORD
        eval_dataset = compute_metrics = None
        if "eval_dataset" in keywords:
            eval_dataset = self.optional_value(keywords["eval_dataset"].value, kind, f"{callee}(eval_dataset=...)")
        if "compute_metrics" in keywords:
            compute_metrics = self.optional_value(
                keywords["compute_metrics"].value, kind, f"{callee}(compute_metrics=...)"
            )
        reduces_logits = None
        if "preprocess_logits_for_metrics" in keywords:
            reduces_logits = self.optional_value(
                keywords["preprocess_logits_for_metrics"].value, kind, f"{callee}(preprocess_logits_for_metrics=...)"
            )
        splats = [arg.value for arg in node.args if arg.star == "**"]
        builder = None
        if eval_dataset is None:
            for splat in splats:
                eval_dataset, imported = self.splat_eval_dataset(splat, node)
                builder = builder or imported
                if eval_dataset is not None:
                    break
        origin = ctx.origin(node) or _empty_origin(ctx.source)
        self.trainer_calls.append(
            TrainerCall(callee, origin, eval_dataset, compute_metrics, bool(splats), preprocess_logits=reduces_logits,
                        splat_builder=builder if len(splats) == 1 else None)
        )

    def splat_eval_dataset(self, splat: CstExpr, call: cst.Call) -> Tuple[Optional[Setting], Optional[str]]:
        """The `eval_dataset` inside `**data_module` when the dict is built visibly in this file, or
        the name of the imported function that builds it."""
        ctx = self.ctx
        scope = ctx.scope_of(call)
        built, builder = splat, "the splatted dict"
        if isinstance(splat, cst.Name):
            bindings = ctx.assignments(scope, splat.value)
            if len(bindings) != 1 or bindings[0].conditional or bindings[0].value is None:
                return None, None
            built = bindings[0].value
            builder = f"`{splat.value}`"
        if isinstance(built, cst.Call) and isinstance(built.func, cst.Name):
            if built.func.value in ctx.functions:
                return self.returned_eval_dataset(ctx.functions[built.func.value]), None
            return None, built.func.value
        return self.dict_eval_dataset(built, scope, builder), None

    def returned_eval_dataset(self, function: cst.FunctionDef) -> Optional[Setting]:
        """The `eval_dataset` entry of the one dict a function returns."""
        returned = _returned_values(function)
        if len(returned) != 1 or returned[0] is None:
            return None
        return self.dict_eval_dataset(returned[0], function, f"the dict returned by {function.name.value}()")

    def dict_eval_dataset(self, built: CstExpr, built_scope: cst.CSTNode, builder: str) -> Optional[Setting]:
        ctx = self.ctx
        entry = _dict_entry(built, "eval_dataset")
        if entry is None:
            return None
        note = f"eval_dataset in {builder}"
        literal = literal_value(entry)
        if literal is None:
            return Setting(None, SourceKind.CODE_KEYWORD, ctx.origin(entry), ctx.text(entry), note=note)
        if isinstance(entry, cst.Name) and isinstance(literal, _NotLiteral):
            resolved = self.resolve_in_scope(entry, built_scope, note)
            if resolved is not None:
                return resolved
        reason = f"expression `{ctx.short(entry)}` in {builder}"
        return Setting(Unknown(reason), SourceKind.CODE_KEYWORD, ctx.origin(entry), ctx.text(entry), note=note)

    def returned_eval_datasets(self) -> Tuple[Tuple[str, Setting], ...]:
        found = []
        for name, function in self.ctx.functions.items():
            setting = self.returned_eval_dataset(function)
            if setting is not None:
                found.append((name, setting))
        return tuple(found)

    def resolve_in_scope(self, name: cst.Name, scope: cst.CSTNode, note: str) -> Optional[Setting]:
        ctx = self.ctx
        bindings = ctx.assignments(scope, name.value)
        if not bindings:
            return None
        kind = SourceKind.CODE_KEYWORD
        first = bindings[0]
        if (
            len(bindings) == 1
            and not first.conditional
            and first.value is not None
            and literal_value(first.value) is None
        ):
            return Setting(None, kind, ctx.origin(first.value), ctx.text(first.value), note=note)
        described = ", ".join(_describe_binding(ctx, binding) for binding in bindings)
        reason = f"`{name.value}` is assigned {described}"
        if len(bindings) > 1 or first.conditional:
            reason += " depending on the branch taken"
        return Setting(Unknown(reason), kind, ctx.origin(name), ctx.text(name), note=note)

    def checkpointing_call(self, node: cst.Call, enabled: bool) -> None:
        receiver = node.func.value if isinstance(node.func, cst.Attribute) else node.func
        target = self.ctx.text(receiver)
        self.add_override("gradient_checkpointing", enabled, node, target, f"{target}.{_last_name(node.func)}()")

    def kbit_preparation(self, node: cst.Call) -> None:
        # peft's prepare_model_for_kbit_training turns checkpointing on unless told otherwise.
        flag = _keyword_args(node).get("use_gradient_checkpointing")
        if flag is not None:
            value = literal_value(flag.value)
            if value is not True:
                return  # False, or follows a flag (`use_gradient_checkpointing=training_args.gradient_checkpointing`)
        positional = [arg for arg in node.args if arg.keyword is None and not arg.star]
        target = self.ctx.text(positional[0].value) if positional else ""
        self.add_override(
            "gradient_checkpointing", True, node, target, "prepare_model_for_kbit_training() enables checkpointing"
        )

    def add_override(self, name: str, value: Value, node: cst.CSTNode, target: str, note: str) -> None:
        ctx = self.ctx
        conditions = ctx.conditions(node)
        if any(_test_requires_flag(test, in_body, name) for test, in_body in conditions):
            return  # only runs when the flag is already on: it follows the flag, it does not set it
        when = self.flag_condition(conditions)
        applied = value
        if conditions:
            value = Unknown(_condition_reason(ctx, conditions[0]))
        setting = Setting(value, SourceKind.CODE_OVERRIDE, ctx.origin(node), ctx.text(node), note=note)
        self.overrides.append(self.gated_override(name, setting, target, when, applied))

    def flag_condition(self, conditions: Sequence[Tuple[Optional[CstExpr], bool]]) -> Optional[Tuple[str, bool]]:
        """(argument name, negated) when the only enclosing branch tests one parsed argument:
        `if model_args.grad_checkpoint:` (its body) or the `else` of it. The resolution can then
        tell whether the branch runs from the value the launcher gives that argument."""
        if len(conditions) != 1:
            return None
        test, in_body = conditions[0]
        negated = not in_body
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            test, negated = test.expression, not negated
        name = None
        if isinstance(test, cst.Attribute) and isinstance(test.value, cst.Name) and self.is_args_name(test.value.value):
            name = test.attr.value
        elif (
            isinstance(test, cst.Call)
            and _last_name(test.func) == "getattr"
            and len(test.args) >= 2
            and isinstance(test.args[0].value, cst.Name)
            and self.is_args_name(test.args[0].value.value)
        ):
            written = literal_value(test.args[1].value)
            name = written if isinstance(written, str) else None
        return (name, negated) if name else None

    @staticmethod
    def gated_override(
        name: str, setting: Setting, target: str, when: Optional[Tuple[str, bool]], applied: Value
    ) -> Override:
        if when is None or isinstance(applied, Unknown):
            return Override(name, setting, target)
        return Override(name, setting, target, when=when[0], when_negated=when[1], when_value=applied)

    def peft_call(self, node: cst.Call) -> None:
        ctx = self.ctx
        setting = Setting(
            True, SourceKind.CODE_KEYWORD, ctx.origin(node), ctx.text(node), note="get_peft_model() is called"
        )
        self.other_keywords.append(("get_peft_model", Keyword("called", setting)))

    def knob_keywords(self, node: cst.Call, callee: str) -> None:
        wanted = OTHER_CALL_KEYWORDS[callee]
        for name, arg in _keyword_args(node).items():
            if name in wanted:
                keyword = self.keyword(name, arg.value, SourceKind.CODE_KEYWORD, f"{callee}({name}=...)")
                self.other_keywords.append((callee, keyword))

    # ------------------------------------------------ assignments after parsing
    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self.attribute_override(target.target, node.value, node)
            self.attention_assignment(target.target, node.value)

    def attention_assignment(self, target: cst.BaseExpression, value: CstExpr) -> None:
        """`config.llm_config.attn_implementation = 'flash_attention_2'`: a model config told its
        attention kernel in code (kept aside; `result` decides what the module says)."""
        if isinstance(target, cst.Attribute) and target.attr.value in ("attn_implementation", "_attn_implementation"):
            written = literal_value(value)
            if isinstance(written, str):
                self._attention.append((written, value))

    def attention_keywords(self) -> List[Tuple[str, Keyword]]:
        """The assignments above, when every one of them (in whichever branch) names the same kernel."""
        if not self._attention or len({written for written, _ in self._attention}) != 1:
            return []
        ctx = self.ctx
        found = []
        for written, value in self._attention:
            setting = Setting(
                written,
                SourceKind.CODE_KEYWORD,
                ctx.origin(value),
                ctx.text(value),
                note="attn_implementation assigned in code",
            )
            found.append(("config.attn_implementation", Keyword("attn_implementation", setting)))
        return found

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.attribute_override(node.target, None, node)

    def attribute_override(self, target: cst.BaseExpression, value: Optional[CstExpr], statement: cst.CSTNode) -> None:
        if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)):
            return
        owner = target.value.value
        if not self.is_args_name(owner):
            return
        ctx = self.ctx
        name = target.attr.value
        conditions = ctx.conditions(statement)
        if any(_test_requires_flag(test, in_body, name) for test, in_body in conditions):
            return
        note = f"{owner}.{name} assigned in code"
        if value is None:
            setting = Setting(
                Unknown(f"expression `{ctx.short(statement)}`"),
                SourceKind.CODE_OVERRIDE,
                ctx.origin(statement),
                ctx.text(statement),
                note=note,
            )
            self.overrides.append(Override(name, setting, owner))
            return
        keyword = self.keyword(name, value, SourceKind.CODE_OVERRIDE, note)
        setting = keyword.setting
        applied = setting.value if keyword.reference is None else Unknown("follows another argument")
        if conditions:
            setting = Setting(
                Unknown(_condition_reason(ctx, conditions[0])), setting.kind, setting.origin, setting.text, note=note
            )
        self.overrides.append(self.gated_override(name, setting, owner, self.flag_condition(conditions), applied))

    # ------------------------------------------------ imports
    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            module = _dotted(alias.name)
            if module is not None:
                origin = self.ctx.origin(alias.name) or _empty_origin(self.ctx.source)
                self.imports.append(ImportInfo(module, (), origin))

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        ctx = self.ctx
        dots = "".join("." for _ in node.relative)
        written = _dotted(node.module) if node.module is not None else ""
        if written is None:
            return
        if isinstance(node.names, cst.ImportStar):
            names: Tuple[str, ...] = ("*",)
        else:
            names = tuple(_dotted(alias.name) or "" for alias in node.names)
        first = node.relative[0] if node.relative else node.module
        last = node.module if node.module is not None else node.relative[-1]
        start, end = ctx.origin(first), ctx.origin(last)
        origin = ctx.source.origin(start.start_byte, end.end_byte) if start and end else _empty_origin(ctx.source)
        self.imports.append(ImportInfo(dots + written, names, origin))


def _is_dataclass_decorator(decorator: CstExpr) -> bool:
    target = decorator.func if isinstance(decorator, cst.Call) else decorator
    return _dotted(target) in ("dataclass", "dataclasses.dataclass")


def _is_field_call(value: CstExpr) -> bool:
    return isinstance(value, cst.Call) and _dotted(value.func) in ("field", "dataclasses.field")


def _class_annotations(node: cst.ClassDef) -> Iterable[cst.AnnAssign]:
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else (node.body,)
    for statement in body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.AnnAssign):
                    yield small
        elif isinstance(statement, cst.SimpleStatementSuite):
            for small in statement.body:
                if isinstance(small, cst.AnnAssign):
                    yield small


def _argparse_dest(options: Tuple[str, ...], keywords: Mapping[str, cst.Arg]) -> Optional[str]:
    """The attribute name argparse stores the option under."""
    if "dest" in keywords:
        dest = literal_value(keywords["dest"].value)
        return dest if isinstance(dest, str) else None
    if not options[0].startswith("-"):
        return options[0]  # positional argument
    long_options = [option for option in options if option.startswith("--")]
    chosen = long_options[0] if long_options else options[0]
    return chosen.lstrip("-").replace("-", "_") or None


def _returned_values(function: cst.FunctionDef) -> List[Optional[CstExpr]]:
    """Values of the function's own `return` statements (nested functions excluded)."""
    found: List[Optional[CstExpr]] = []

    class Returns(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is function

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            return False

        def visit_Return(self, node: cst.Return) -> None:
            found.append(node.value)

    function.visit(Returns())
    return found


def _dict_entry(built: CstExpr, key: str) -> Optional[CstExpr]:
    """The value under `key` in a `{...}` literal or a `dict(...)` call."""
    if isinstance(built, cst.Call) and _dotted(built.func) == "dict":
        for arg in built.args:
            if arg.keyword is not None and arg.keyword.value == key:
                return arg.value
        return None
    if isinstance(built, cst.Dict):
        for element in built.elements:
            if isinstance(element, cst.DictElement) and literal_value(element.key) == key:
                return element.value
    return None


def _describe_binding(ctx: _Context, binding: _Assignment) -> str:
    if binding.value is not None:
        return f"`{ctx.short(binding.value)}`"
    if binding.unpacked_from is not None:
        return f"a part of `{ctx.short(binding.unpacked_from)}`"
    return "in a loop or `with` statement"


def _condition_reason(ctx: _Context, condition: Tuple[Optional[CstExpr], bool]) -> str:
    test, in_body = condition
    if test is None:
        return "conditional on an exception being raised"
    written = ctx.short(test)
    return f"conditional on `{written}`" if in_body else f"conditional on `not ({written})`"


def _main_calls(ctx: _Context) -> Tuple[str, ...]:
    """Functions called when the file runs: at module level (plain names) and under the main guard."""
    found: List[str] = []
    for statement in ctx.module.body:
        if isinstance(statement, cst.If) and _is_main_guard(statement.test):
            found.extend(_called_in(statement.body, dotted_ok=True))
        elif isinstance(statement, cst.SimpleStatementLine):
            found.extend(_called_in(statement, dotted_ok=False))
    return tuple(dict.fromkeys(name for name in found if name))


def _called_in(block: cst.CSTNode, dotted_ok: bool) -> List[str]:
    """Outermost calls of the simple statements in a block (`main()`, `x = train()`, `fire.Fire(main)`)."""
    names: List[str] = []

    class Calls(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return False

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            return False

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

        def visit_Call(self, node: cst.Call) -> bool:
            callee = _dotted(node.func)
            if callee is not None and (dotted_ok or isinstance(node.func, cst.Name)):
                names.append(callee)
            if _last_name(node.func) == "Fire" and node.args:
                target = _dotted(node.args[0].value)
                if target is not None:
                    names.append(target)
            return False

    block.visit(Calls())
    return names


def _empty_origin(source: SourceText) -> Origin:
    return source.origin(0, 0)
