"""Argument dataclasses (their fields and defaults) and the `HfArgumentParser(...)` that parses them."""

from __future__ import annotations

from dataclasses import replace
from typing import Dict, Iterable, Optional, Tuple

import libcst as cst

from trainlint.core import Setting, SourceKind, Unknown
from trainlint.readers.facts import DataclassInfo, FieldDefault
from trainlint.readers.python.context import empty_origin
from trainlint.readers.python.expressions import CstExpr, NotLiteral, dotted_name, keyword_args, literal_value
from trainlint.readers.python.imports import import_aliases
from trainlint.readers.python.values import ValueReader

HF_PARSERS = frozenset({"HfArgumentParser", "TrlParser"})
# A project's own parser built on HfArgumentParser (alignment-handbook's `H4ArgumentParser`, open-instruct's
# `ArgumentParserPlus`) is defined in another module; it is told by its name and its first argument: the tuple of
# classes it parses, where argparse's own ArgumentParser takes the program's name.
DERIVED_PARSER_WORD = "ArgumentParser"


def may_be_hf_parser(callee: str) -> bool:
    """Whether a call by this name may build an HF argument parser (a superset: the arguments decide)."""
    return callee in HF_PARSERS or DERIVED_PARSER_WORD in callee


class ArgumentClassReader:
    """`@dataclass` classes with their fields, and the dataclass types handed to an HF parser."""

    def __init__(self, values: ValueReader):
        self.values = values
        self.ctx = values.ctx
        self._aliases: Optional[Dict[str, str]] = None

    def dataclass(self, node: cst.ClassDef) -> Optional[DataclassInfo]:
        """The class when it is a dataclass, else None."""
        if not any(_is_dataclass_decorator(decorator.decorator) for decorator in node.decorators):
            return None
        ctx = self.ctx
        class_name = node.name.value
        bases = tuple(self._base_name(arg.value) for arg in node.bases if arg.keyword is None and not arg.star)
        fields = [self.dataclass_field(class_name, statement) for statement in _class_annotations(node)]
        origin = ctx.origin(node.name) or empty_origin(ctx.source)
        return DataclassInfo(class_name, bases, tuple(f for f in fields if f is not None), origin)

    def _base_name(self, base: CstExpr) -> str:
        """A base class as written, with an import alias replaced by what it names: a dataclass deriving
        from `HFTrainingArguments` (`from transformers import TrainingArguments as HFTrainingArguments`)
        derives from `transformers.TrainingArguments`."""
        written = self.ctx.text(base)
        head, dot, rest = written.partition(".")
        if self._aliases is None:
            self._aliases = import_aliases(self.ctx.module)
        target = self._aliases.get(head)
        return written if target is None else target + dot + rest

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
        if default is not None:
            default = replace(default, written_as=name)
        origin = ctx.origin(statement)
        return FieldDefault(name, default, class_name, (), type_name, origin)

    def field_default(self, value: CstExpr, note: str) -> Optional[Setting]:
        kind = SourceKind.DATACLASS_DEFAULT
        if not _is_field_call(value):
            return self.values.keyword("", value, kind, note).setting
        keywords = keyword_args(value)  # type: ignore[arg-type]
        if "default" in keywords:
            return self.values.keyword("", keywords["default"].value, kind, note).setting
        if "default_factory" in keywords:
            return self.factory_default(keywords["default_factory"].value, note)
        return None  # field(metadata=...) alone: a required field

    def factory_default(self, factory: CstExpr, note: str) -> Setting:
        ctx = self.ctx
        kind = SourceKind.DATACLASS_DEFAULT
        if isinstance(factory, cst.Lambda) and not factory.params.params:
            body_literal = literal_value(factory.body)
            if not isinstance(body_literal, NotLiteral):
                return Setting(body_literal, kind, ctx.origin(factory.body), ctx.text(factory.body), note=note)
        reason = f"default_factory `{ctx.short(factory)}`"
        return Setting(Unknown(reason), kind, ctx.origin(factory), ctx.text(factory), note=note)

    def hf_parser_types(self, node: cst.Call, callee: str) -> Optional[Tuple[str, ...]]:
        """The dataclass types an `HfArgumentParser(...)` call parses into, as written; None for a call that
        is no HF parser's (`argparse.ArgumentParser(description=...)`)."""
        keywords = keyword_args(node)
        positional = [arg for arg in node.args if arg.keyword is None and not arg.star]
        types_arg = positional[0] if positional else keywords.get("dataclass_types")
        if types_arg is None:
            return None
        value = types_arg.value
        if isinstance(value, (cst.Tuple, cst.List)):
            return tuple(self.ctx.text(element.value) for element in value.elements)
        if callee not in HF_PARSERS and keywords.get("dataclass_types") is not types_arg:
            return None  # a derived parser is told by its tuple of classes (or the keyword that names them)
        return (self.ctx.text(value),)


def _is_dataclass_decorator(decorator: CstExpr) -> bool:
    target = decorator.func if isinstance(decorator, cst.Call) else decorator
    return dotted_name(target) in ("dataclass", "dataclasses.dataclass")


def _is_field_call(value: CstExpr) -> bool:
    return isinstance(value, cst.Call) and dotted_name(value.func) in ("field", "dataclasses.field")


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
