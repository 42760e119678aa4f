"""What ties a file to the others: its imports, the module files they name, and the functions it calls
when it runs (an entry script that imports `train()` from elsewhere and calls it)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from trainlint.core import Setting, SourceKind
from trainlint.readers.facts import ImportInfo

if TYPE_CHECKING:
    import libcst as cst

    from trainlint.readers.python.context import Context


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


def import_infos(ctx: Context, node: cst.Import) -> List[ImportInfo]:
    """`import a.b, c`: one ImportInfo per module named."""
    # lazy: resolve_import is pure path logic that a cached scan calls without needing libcst (~300 ms)
    from trainlint.readers.python.context import empty_origin
    from trainlint.readers.python.expressions import dotted_name

    found = []
    for alias in node.names:
        module = dotted_name(alias.name)
        if module is not None:
            origin = ctx.origin(alias.name) or empty_origin(ctx.source)
            found.append(ImportInfo(module, (), origin))
    return found


def import_from_info(ctx: Context, node: cst.ImportFrom) -> Optional[ImportInfo]:
    """`from ..a import b, c` (relative dots kept in the module name), or None when it names no module."""
    import libcst as cst  # lazy, as in import_infos

    from trainlint.readers.python.context import empty_origin
    from trainlint.readers.python.expressions import dotted_name

    dots = "".join("." for _ in node.relative)
    written = dotted_name(node.module) if node.module is not None else ""
    if written is None:
        return None
    if isinstance(node.names, cst.ImportStar):
        names: Tuple[str, ...] = ("*",)
        bound = names
    else:
        names = tuple(dotted_name(alias.name) or "" for alias in node.names)
        bound = tuple(alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name)
                      else name for alias, name in zip(node.names, names))
    first = node.relative[0] if node.relative else node.module
    last = node.module if node.module is not None else node.relative[-1]
    start, end = ctx.origin(first), ctx.origin(last)
    origin = ctx.source.origin(start.start_byte, end.end_byte) if start and end else empty_origin(ctx.source)
    return ImportInfo(dots + written, names, origin, bound if bound != names else ())


def import_aliases(module: cst.Module) -> Dict[str, str]:
    """The names a module binds with `as` at its top level (also under `try:` or `if`), each to what it
    stands for: `from transformers import TrainingArguments as HFTrainingArguments` binds
    `HFTrainingArguments` to `transformers.TrainingArguments`; `import transformers as tf`, `tf` to
    `transformers`. Relative modules keep their dots (`.params.TrainingArguments`)."""
    import libcst as cst  # lazy, as in import_infos

    from trainlint.readers.python.expressions import dotted_name

    aliases: Dict[str, str] = {}
    for small in _top_level_statements(module.body):
        if isinstance(small, cst.Import):
            for alias in small.names:
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    written = dotted_name(alias.name)
                    if written is not None:
                        aliases[alias.asname.name.value] = written
        elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
            written = dotted_name(small.module) if small.module is not None else ""
            if written is None:
                continue
            prefix = "".join("." for _ in small.relative) + written
            for alias in small.names:
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    name = dotted_name(alias.name)
                    if name is not None:
                        aliases[alias.asname.name.value] = f"{prefix}.{name}" if written else f"{prefix}{name}"
    return aliases


def _top_level_statements(nodes: Iterable[cst.CSTNode]) -> Iterable[cst.BaseSmallStatement]:
    """The simple statements a module runs at its top level, in the blocks of its `if` and `try`
    statements too, but not in its functions or classes."""
    import libcst as cst  # lazy, as in import_infos

    for node in nodes:
        if isinstance(node, cst.SimpleStatementLine):
            yield from node.body
        elif isinstance(node, cst.If):
            yield from _top_level_statements(node.body.body)
            if node.orelse is not None:
                yield from _top_level_statements((node.orelse,) if isinstance(node.orelse, cst.If)
                                                 else node.orelse.body.body)
        elif isinstance(node, (cst.Try, cst.TryStar)):
            yield from _top_level_statements(node.body.body)
            for handler in node.handlers:
                yield from _top_level_statements(handler.body.body)
            for block in (node.orelse, node.finalbody):
                if block is not None:
                    yield from _top_level_statements(block.body.body)


def main_calls(ctx: Context) -> Tuple[str, ...]:
    """Functions called when the file runs: at module level (plain names) and under the main guard."""
    found: List[str] = []
    for block, dotted_ok in _blocks_run(ctx):
        found.extend(_called_in(block, dotted_ok))
    return tuple(dict.fromkeys(name for name in found if name))


def _blocks_run(ctx: Context) -> Iterator[Tuple[cst.CSTNode, bool]]:
    """The module's statements that run when the file runs (`ctx.calling` narrows them): each simple statement, and
    each main guard's body, with whether a dotted callee there counts (`trainer.main()` under the guard does)."""
    import libcst as cst  # lazy, as in import_infos

    from trainlint.readers.python.expressions import is_main_guard

    for statement in ctx.module.body:
        if ctx.calling is not None and id(statement) not in ctx.calling:
            continue
        if isinstance(statement, cst.If) and is_main_guard(statement.test):
            yield statement.body, True
        elif isinstance(statement, cst.SimpleStatementLine):
            yield statement, False


def _main_call_keywords(ctx: Context) -> Iterator[Tuple[str, str, "cst.Arg"]]:
    """(the function's last name, keyword, argument) for each keyword argument of the calls `main_calls` finds."""
    import libcst as cst  # lazy, as in import_infos

    from trainlint.readers.python.expressions import last_name

    for block, dotted_ok in _blocks_run(ctx):
        for call in _outer_calls(block):
            function = last_name(call.func)
            if function is None or not (dotted_ok or isinstance(call.func, cst.Name)):
                continue
            for arg in call.args:
                if arg.keyword is not None:
                    yield function, arg.keyword.value, arg


def main_call_references(ctx: Context, reference: Callable[[Any], Optional[str]]) -> Tuple[Tuple[str, str, str], ...]:
    """The keyword arguments of the calls `main_calls` finds that read a parsed argument (`reference` tells which):
    (the function's last name, keyword, the argument)."""
    found = ((function, keyword, reference(arg.value)) for function, keyword, arg in _main_call_keywords(ctx))
    return tuple((function, keyword, read) for function, keyword, read in found if read is not None)


def main_call_arguments(ctx: Context) -> Tuple[Tuple[str, str, Setting], ...]:
    """The constant keyword arguments of the calls `main_calls` finds: (the function's last name, keyword, value)."""
    from trainlint.readers.python.expressions import NotLiteral, literal_value

    found: List[Tuple[str, str, Setting]] = []
    for function, keyword, arg in _main_call_keywords(ctx):
        value = literal_value(arg.value)
        if not isinstance(value, NotLiteral):
            setting = Setting(value, SourceKind.CODE_KEYWORD, ctx.origin(arg.value), ctx.text(arg.value),
                              note=f"{function}({keyword}=...)", written_as=keyword)
            found.append((function, keyword, setting))
    return tuple(found)


def _called_in(block: cst.CSTNode, dotted_ok: bool) -> List[str]:
    """Outermost calls of the simple statements in a block (`main()`, `x = train()`, `fire.Fire(main)`)."""
    import libcst as cst  # lazy, as in import_infos

    from trainlint.readers.python.expressions import dotted_name, last_name

    names: List[str] = []
    for node in _outer_calls(block):
        callee = dotted_name(node.func)
        if callee is not None and (dotted_ok or isinstance(node.func, cst.Name)):
            names.append(callee)
        if last_name(node.func) == "Fire" and node.args:
            target = dotted_name(node.args[0].value)
            if target is not None:
                names.append(target)
    return names


def _outer_calls(block: cst.CSTNode) -> List[cst.Call]:
    """The outermost calls of the simple statements in a block, outside the functions and classes it defines."""
    import libcst as cst  # lazy, as in import_infos

    from trainlint.readers.python.walk import children

    calls: List[cst.Call] = []

    def visit(node: cst.CSTNode) -> None:
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return
        if isinstance(node, cst.Call):
            calls.append(node)
            return
        for child in children(node):
            visit(child)

    visit(block)
    return calls
