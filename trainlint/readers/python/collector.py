"""One walk over a parsed file that hands each statement and call to the extractor it concerns."""

from __future__ import annotations

from typing import FrozenSet, List

import libcst as cst

from trainlint.readers.facts import ATTENTION_PATCH, LORA_CONFIG, PythonModule
from trainlint.readers.python.adapters import AdapterReader
from trainlint.readers.python.argparse_args import read_add_argument, returns_remaining_strings
from trainlint.readers.python.argument_classes import HF_PARSERS, ArgumentClassReader, may_be_hf_parser
from trainlint.readers.python.config_calls import OTHER_CALL_KEYWORDS, ConfigCallReader, is_config_class
from trainlint.readers.python.context import Context
from trainlint.readers.python.deepspeed_calls import (
    DEEPSPEED_ENGINE_CALLEE,
    config_arguments,
    engine_keywords,
    is_add_config_arguments,
    is_engine_call,
)
from trainlint.readers.python.eval_data import EvalDataReader
from trainlint.readers.python.expressions import last_name
from trainlint.readers.python.findings import Findings
from trainlint.readers.python.fire_cli import FIRE_CALLEE, is_fire_call, read_command_line
from trainlint.readers.python.freezing import FreezeReader, is_freeze_call
from trainlint.readers.python.imports import (
    import_from_info,
    import_infos,
    main_call_arguments,
    main_call_references,
    main_calls,
)
from trainlint.readers.python.overrides import (
    CAST_CALLEES,
    KBIT_PREPARATION,
    LORA_CONVERSION,
    OverrideReader,
    cast_dtype,
)
from trainlint.readers.python.values import ValueReader
from trainlint.readers.python.walk import children

_HANDLERS = {
    cst.ClassDef: "visit_ClassDef",
    cst.Call: "visit_Call",
    cst.Assign: "visit_Assign",
    cst.AugAssign: "visit_AugAssign",
    cst.Import: "visit_Import",
    cst.ImportFrom: "visit_ImportFrom",
}


class Collector(cst.CSTVisitor):
    def __init__(self, ctx: Context, skip: FrozenSet[int] = frozenset()):
        """`skip`: ids of the statements that hold nothing to collect (the prefilter's screen)."""
        super().__init__()
        self._skip = skip
        self.ctx = ctx
        self.found = Findings()
        values = ValueReader(ctx)
        self.values = values
        self.argument_classes = ArgumentClassReader(values)
        self.config_calls = ConfigCallReader(values, self.found)
        self.eval_data = EvalDataReader(values)
        self.overrides = OverrideReader(values, self.found)
        self.adapters = AdapterReader(values, self.found)
        self.freezing = FreezeReader(values, self.found)
        self._ancestors: List[cst.CSTNode] = ctx.walk_path

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self._ancestors:
            self.ctx.parents[node] = self._ancestors[-1]
        self._ancestors.append(node)
        if id(node) in self._skip:
            return False
        return super().on_visit(node)

    def on_leave(self, original_node: cst.CSTNode) -> None:
        super().on_leave(original_node)
        self._ancestors.pop()

    def walk(self, node: cst.CSTNode) -> None:
        """What visiting the node does (parents recorded, idle statements skipped, the `visit_*` handlers
        called on the way down), without libcst's copy of every node."""
        ancestors = self._ancestors
        if ancestors:
            self.ctx.parents[node] = ancestors[-1]
        if id(node) in self._skip:
            return
        ancestors.append(node)
        handler = getattr(self, _HANDLERS.get(type(node), ""), None)
        if handler is not None:
            handler(node)
        for child in children(node):
            self.walk(child)
        ancestors.pop()

    @property
    def ancestors(self) -> List[cst.CSTNode]:
        """The nodes the walk is inside now, outermost first."""
        return self._ancestors

    def result(self) -> PythonModule:
        found = self.found
        return PythonModule(
            path=self.ctx.source.path,
            dataclasses=tuple(found.dataclasses),
            argparse_args=tuple(found.argparse_args),
            hf_parsers=tuple(found.hf_parsers),
            derived_parsers=tuple(found.derived_parsers),
            config_calls=tuple(found.config_calls),
            trainer_calls=tuple(found.trainer_calls),
            overrides=tuple(found.overrides),
            imports=tuple(found.imports),
            main_calls=main_calls(self.ctx),
            main_call_arguments=main_call_arguments(self.ctx),
            main_call_references=main_call_references(self.ctx, self.values.argument_reference),
            parse_known_args=found.parse_known_args,
            reads_config_flag=found.reads_config_flag,
            takes_any_flag=found.takes_any_flag,
            other_keywords=tuple(found.other_keywords) + tuple(self.overrides.attention_keywords()),
            diagnostics=tuple(found.diagnostics),
            returned_eval_datasets=self.eval_data.returned_eval_datasets(),
            freezes=tuple(found.freezes),
        )

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        info = self.argument_classes.dataclass(node)
        if info is not None:
            self.found.dataclasses.append(info)

    def visit_Call(self, node: cst.Call) -> None:
        callee = last_name(node.func)
        if callee is None:
            return
        if callee == "add_argument" and isinstance(node.func, cst.Attribute):
            argument = read_add_argument(self.values, node)
            if argument is not None:
                self.found.argparse_args.append(argument)
        elif callee == "parse_known_args":
            self.found.parse_known_args = True
        elif callee == "parse_args_and_config":
            self.found.reads_config_flag = True
        elif callee == "parse_args_into_dataclasses":
            if returns_remaining_strings(node):
                self.found.parse_known_args = True
        elif may_be_hf_parser(callee):
            types = self.argument_classes.hf_parser_types(node, callee)
            if types is not None:
                self.found.hf_parsers.append(types)
                if callee not in HF_PARSERS:
                    self.found.derived_parsers.append(callee)
        elif is_config_class(callee):
            self.config_calls.config_call(node)
        elif callee.endswith("Trainer"):
            self.found.trainer_calls.append(self.eval_data.trainer_call(node))
        elif callee in ("gradient_checkpointing_enable", "gradient_checkpointing_disable") and isinstance(
            node.func, cst.Attribute
        ):
            self.overrides.checkpointing_call(node, callee == "gradient_checkpointing_enable")
        elif callee == "_set_gradient_checkpointing" and isinstance(node.func, cst.Attribute):
            self.overrides.internal_checkpointing_switch(node)
        elif callee in KBIT_PREPARATION:
            self.overrides.kbit_preparation(node)
        elif callee == "get_peft_model":
            self.config_calls.peft_call(node)
        elif LORA_CONVERSION.match(callee):
            self.overrides.lora_conversion(node)
        elif callee in CAST_CALLEES and (dtype := cast_dtype(node)) is not None:
            self.overrides.dtype_cast(node, dtype)
        elif (patch := ATTENTION_PATCH.match(callee)) is not None:
            self.config_calls.attention_patch(node, patch["family"], patch.group(0))
        elif callee == FIRE_CALLEE and is_fire_call(node):
            command_line = read_command_line(self.values, node)
            if command_line is not None:
                self.found.argparse_args.extend(command_line.arguments)
                self.found.takes_any_flag = self.found.takes_any_flag or command_line.takes_any_flag
        elif is_add_config_arguments(node):
            self.found.argparse_args.extend(config_arguments(self.values, node))
        elif is_engine_call(node):
            self.found.other_keywords.extend(
                (DEEPSPEED_ENGINE_CALLEE, keyword) for keyword in engine_keywords(self.values, node))
        if is_freeze_call(node):
            self.freezing.call(node)
        elif callee == LORA_CONFIG:
            self.adapters.lora_config(node)
        elif callee in OTHER_CALL_KEYWORDS:
            self.config_calls.knob_keywords(node, callee)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self.overrides.assignment(target.target, node.value, node)
            self.freezing.assignment(target.target, node.value, node)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.overrides.attribute_override(node.target, None, node)

    def visit_Import(self, node: cst.Import) -> None:
        self.found.imports.extend(import_infos(self.ctx, node))

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        info = import_from_info(self.ctx, node)
        if info is not None:
            self.found.imports.append(info)
