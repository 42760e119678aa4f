"""`Trainer(...)` calls and whether they get an eval dataset: `eval_dataset=None`, a local that is only
ever None, or the `eval_dataset` entry of a data module dict splatted in (`**data_module`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Tuple

import libcst as cst

from trainlint.core import Setting, SourceKind, Unknown
from trainlint.readers.facts import Gate, TrainerCall
from trainlint.readers.python.context import Branch, empty_origin
from trainlint.readers.python.expressions import (
    CstExpr,
    NotLiteral,
    dotted_name,
    keyword_args,
    last_name,
    literal_value,
)
from trainlint.readers.python.gates import GateReader
from trainlint.readers.python.values import ValueReader
from trainlint.readers.python.walk import children


@dataclass(frozen=True)
class SplatEvalDataset:
    """What a `**data_module` splat tells about the eval dataset: the setting when the dict is built
    visibly in this file, or the name of the imported function that builds it."""

    setting: Optional[Setting] = None
    imported_builder: Optional[str] = None


class EvalDataReader:
    """The eval side of the trainers a file builds, and of the data-module dicts its functions return."""

    def __init__(self, values: ValueReader):
        self.values = values
        self.ctx = values.ctx

    def trainer_call(self, node: cst.Call) -> TrainerCall:
        ctx = self.ctx
        callee = ctx.text(node.func)
        keywords = keyword_args(node)
        kind = SourceKind.CODE_KEYWORD
        eval_dataset = compute_metrics = None
        if "eval_dataset" in keywords:
            eval_dataset = self.values.optional_value(
                keywords["eval_dataset"].value, kind, f"{callee}(eval_dataset=...)"
            )
        metrics_gates: Tuple[Gate, ...] = ()
        if "compute_metrics" in keywords:
            metrics = keywords["compute_metrics"].value
            chosen = _unless_none(metrics)
            if chosen is not None:  # `X if args.flag else None`: metrics only when the branch holds
                metrics, in_body = chosen
                metrics_gates = (GateReader(self.values).branch(Branch(keywords["compute_metrics"].value.test,
                                                                       in_body)),)
            compute_metrics = self.values.optional_value(metrics, kind, f"{callee}(compute_metrics=...)")
        reduces_logits = None
        if "preprocess_logits_for_metrics" in keywords:
            reduces_logits = self.values.optional_value(
                keywords["preprocess_logits_for_metrics"].value, kind, f"{callee}(preprocess_logits_for_metrics=...)"
            )
        splats = [arg.value for arg in node.args if arg.star == "**"]
        builder = None
        if eval_dataset is None:
            for splat in splats:
                found = self.splat_eval_dataset(splat, node)
                eval_dataset = found.setting
                builder = builder or found.imported_builder
                if eval_dataset is not None:
                    break
        origin = ctx.origin(node) or empty_origin(ctx.source)
        written = {name: self.values.keyword(name, keywords[name].value, kind, f"{callee}({name}=...)").setting
                   for name in ("ref_model", "peft_config") if name in keywords}
        peft = keywords.get("peft_config")
        builder_call = peft.value if peft is not None and isinstance(peft.value, cst.Call) else None
        return TrainerCall(
            callee,
            origin,
            eval_dataset,
            compute_metrics,
            bool(splats),
            preprocess_logits=reduces_logits,
            splat_builder=builder if len(splats) == 1 else None,
            ref_model=written.get("ref_model"),
            peft_config=written.get("peft_config"),
            peft_config_builder=last_name(builder_call.func) if builder_call is not None else None,
            compute_metrics_gates=metrics_gates,
        )

    def splat_eval_dataset(self, splat: CstExpr, call: cst.Call) -> SplatEvalDataset:
        """The `eval_dataset` inside `**data_module` when the dict is built visibly in this file, or
        the name of the imported function that builds it."""
        ctx = self.ctx
        scope = ctx.scope_of(call)
        built, builder = splat, "the splatted dict"
        if isinstance(splat, cst.Name):
            bindings = ctx.assignments(scope, splat.value)
            if len(bindings) != 1 or bindings[0].conditional or bindings[0].value is None:
                return SplatEvalDataset()
            built = bindings[0].value
            builder = f"`{splat.value}`"
        if isinstance(built, cst.Call) and isinstance(built.func, cst.Name):
            if built.func.value in ctx.functions:
                function = ctx.functions[built.func.value]
                # a function left unread holds no `eval_dataset` entry: it returns none
                return SplatEvalDataset(self.returned_eval_dataset(function) if function is not None else None)
            return SplatEvalDataset(imported_builder=built.func.value)
        return SplatEvalDataset(self.dict_eval_dataset(built, scope, builder))

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
        if isinstance(entry, cst.Name) and isinstance(literal, NotLiteral):
            resolved = self.values.resolve_in_scope(entry, built_scope, note)
            if resolved is not None:
                return resolved
        reason = f"expression `{ctx.short(entry)}` in {builder}"
        return Setting(Unknown(reason), SourceKind.CODE_KEYWORD, ctx.origin(entry), ctx.text(entry), note=note)

    def returned_eval_datasets(self) -> Tuple[Tuple[str, Setting], ...]:
        found = []
        for name, function in self.ctx.functions.items():
            setting = self.returned_eval_dataset(function) if function is not None else None
            if setting is not None:
                found.append((name, setting))
        return tuple(found)


def _returned_values(function: cst.FunctionDef) -> List[Optional[CstExpr]]:
    """Values of the function's own `return` statements (nested functions excluded)."""
    found: List[Optional[CstExpr]] = []

    def visit(node: cst.CSTNode) -> None:
        if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)) and node is not function:
            return
        if isinstance(node, cst.Return):
            found.append(node.value)
        for child in children(node):
            visit(child)

    visit(function)
    return found


def _dict_entry(built: CstExpr, key: str) -> Optional[CstExpr]:
    """The value under `key` in a `{...}` literal or a `dict(...)` call."""
    if isinstance(built, cst.Call) and dotted_name(built.func) == "dict":
        for arg in built.args:
            if arg.keyword is not None and arg.keyword.value == key:
                return arg.value
        return None
    if isinstance(built, cst.Dict):
        for element in built.elements:
            if isinstance(element, cst.DictElement) and literal_value(element.key) == key:
                return element.value
    return None


def _unless_none(value: CstExpr) -> Optional[Tuple[CstExpr, bool]]:
    """`X if test else None` -> (X, True); `None if test else X` -> (X, False): the value the keyword holds when it
    is not None, and whether that is when the test holds. None for anything else."""
    if not isinstance(value, cst.IfExp):
        return None
    body_none, orelse_none = literal_value(value.body) is None, literal_value(value.orelse) is None
    if body_none == orelse_none:
        return None
    return (value.orelse, False) if body_none else (value.body, True)
