"""Settings changed in code after parsing: `training_args.x = ...`, `model.gradient_checkpointing_enable()`,
`prepare_model_for_kbit_training(...)`, and attention kernels assigned to model configs. An override
inside a branch that tests one parsed argument is gated on that argument, so the resolution can tell
from the launcher's value whether it applies."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import List, Optional, Sequence, Tuple

import libcst as cst

from trainlint.core import Setting, SourceKind, Unknown, Value
from trainlint.readers.facts import Keyword, Override
from trainlint.readers.python.context import Branch, condition_reason
from trainlint.readers.python.expressions import CstExpr, dotted_name, keyword_args, last_name, literal_value
from trainlint.readers.python.findings import Findings
from trainlint.readers.python.values import CONVENTIONAL_ARGS_NAME, TORCH_DTYPES, ValueReader

# peft's preparation of a quantized base for training, which turns gradient checkpointing on unless told otherwise;
# `prepare_model_for_int8_training` is its name before peft 0.6 (then a deprecated alias), with the same default.
KBIT_PREPARATION = frozenset({"prepare_model_for_kbit_training", "prepare_model_for_int8_training"})
# DeepSpeed-Chat's `convert_linear_layer_to_lora(...)` and its kin: the base weights freeze, adapters train.
LORA_CONVERSION = re.compile(r"^(convert|inject|apply|add)_\w*lora\w*$", re.IGNORECASE)


# A module's own casts of its parameters (`model = model.half()`): the dtype its weights are in from then on.
CAST_METHODS = {"half": "torch.float16", "bfloat16": "torch.bfloat16", "float": "torch.float32"}
CAST_CALLEES = frozenset(CAST_METHODS) | {"to"}
# The calls that give a model: a name bound to one of these is the model a cast changes.
MODEL_LOADERS = frozenset({"from_pretrained"})


def cast_dtype(node: cst.Call) -> Optional[str]:
    """The dtype a cast of a bare name or a call's result gives (`model.half()`, `model.to(torch.bfloat16)`,
    `model.to(device, dtype=torch.float16)`, `AutoModel.from_pretrained(...).half()`), as `from_pretrained`'s
    `torch_dtype=` is written; None for any other call."""
    if not (isinstance(node.func, cst.Attribute) and isinstance(node.func.value, (cst.Name, cst.Call))):
        return None
    method = node.func.attr.value
    if method in CAST_METHODS:
        return CAST_METHODS[method] if not node.args else None
    if method != "to":
        return None
    for arg in node.args:
        if arg.keyword is None or arg.keyword.value == "dtype":
            written = dotted_name(arg.value)
            if written is not None and written.count(".") == 1 and written.startswith("torch.") \
                    and written.split(".")[1] in TORCH_DTYPES:
                return written
    return None


def _loads_model(value: Optional[CstExpr]) -> bool:
    """A loader's call (`AutoModel.from_pretrained(...)`), or a device move of one (`...(...).cuda()`)."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
            and value.func.attr.value in ("cuda", "to", "eval", "train"):
        value = value.func.value
    return isinstance(value, cst.Call) and last_name(value.func) in MODEL_LOADERS


@dataclass(frozen=True)
class FlagCondition:
    """The parsed argument the only enclosing branch tests, and whether the override sits in the
    branch's `else` (or under `not`)."""

    argument: str
    negated: bool


class OverrideReader:
    """Appends overrides to the file's findings; keeps attention-kernel assignments aside until the end."""

    def __init__(self, values: ValueReader, findings: Findings):
        self.values = values
        self.ctx = values.ctx
        self.findings = findings
        self._attention: List[Tuple[str, CstExpr]] = []

    # ------------------------------------------------ calls
    def checkpointing_call(self, node: cst.Call, enabled: bool) -> None:
        receiver = node.func.value if isinstance(node.func, cst.Attribute) else node.func
        target = self.ctx.text(receiver)
        self.add_override("gradient_checkpointing", enabled, node, target, f"{target}.{last_name(node.func)}()")

    def internal_checkpointing_switch(self, node: cst.Call) -> None:
        # transformers' internal switch (called directly by some model code): on unless told
        # `value=False` / `enable=False`.
        switches = [literal_value(arg.value) for name, arg in keyword_args(node).items() if name in ("value", "enable")]
        self.checkpointing_call(node, not any(v is False for v in switches))

    def kbit_preparation(self, node: cst.Call) -> None:
        # peft's prepare_model_for_kbit_training (or its older name) turns checkpointing on unless told otherwise.
        flag = keyword_args(node).get("use_gradient_checkpointing")
        if flag is not None:
            value = literal_value(flag.value)
            if value is not True:
                return  # False, or follows a flag (`use_gradient_checkpointing=training_args.gradient_checkpointing`)
        positional = [arg for arg in node.args if arg.keyword is None and not arg.star]
        target = self.ctx.text(positional[0].value) if positional else ""
        self.add_override(
            "gradient_checkpointing", True, node, target, f"{last_name(node.func)}() enables checkpointing"
        )

    def dtype_cast(self, node: cst.Call, dtype: str) -> None:
        """`model = model.half()` where `model` is bound to a loaded model in the same scope: its weights are in that
        dtype from then on, whatever `torch_dtype=` loaded them in (ChatGLM's P-tuning and LoRA scripts)."""
        receiver = node.func.value  # a bare name or a call: cast_dtype said so
        if isinstance(receiver, cst.Name):
            bindings = self.ctx.assignments(self.ctx.scope_of(node), receiver.value)
            loaded = any(_loads_model(binding.value) for binding in bindings)
        else:
            loaded = _loads_model(receiver)
        if not loaded:
            return  # a tensor, a sub-module or a model this file does not load
        target = receiver.value if isinstance(receiver, cst.Name) else self.ctx.short(receiver)
        self.add_override("torch_dtype", dtype, node, target, f"{self.ctx.short(node)} casts the weights")

    def add_override(self, name: str, value: Value, node: cst.CSTNode, target: str, note: str) -> None:
        ctx = self.ctx
        conditions = ctx.conditions(node)
        if any(branch.requires_flag(name) for branch in conditions):
            return  # only runs when the flag is already on: it follows the flag, it does not set it
        when = self.flag_condition(conditions)
        applied = value
        if conditions:
            value = Unknown(condition_reason(ctx, conditions[0]))
        setting = Setting(value, SourceKind.CODE_OVERRIDE, ctx.origin(node), ctx.text(node), note=note)
        self.findings.overrides.append(self.gated_override(name, setting, target, when, applied))

    def flag_condition(self, conditions: Sequence[Branch]) -> Optional[FlagCondition]:
        """The argument when the only enclosing branch tests one parsed argument:
        `if model_args.grad_checkpoint:` (its body) or the `else` of it. The resolution can then
        tell whether the branch runs from the value the launcher gives that argument."""
        if len(conditions) != 1:
            return None
        test, in_body = conditions[0].test, conditions[0].in_body
        negated = not in_body
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            test, negated = test.expression, not negated
        is_args_name = self.values.is_args_name
        test = _nonzero_test(test)
        name = None
        if isinstance(test, cst.Attribute):
            name = _dotted_argument(test, is_args_name)
        elif (
            isinstance(test, cst.Call)
            and last_name(test.func) == "getattr"
            and len(test.args) >= 2
            and isinstance(test.args[0].value, cst.Name)
            and is_args_name(test.args[0].value.value)
        ):
            written = literal_value(test.args[1].value)
            name = written if isinstance(written, str) else None
        return FlagCondition(name, negated) if name else None

    def lora_conversion(self, node: cst.Call) -> None:
        """`convert_linear_layer_to_lora(model, ...)`: the model's linear layers become frozen weights plus
        trained low-rank adapters, so the job trains LoRA (often under `if args.lora_dim > 0:`)."""
        positional = [arg for arg in node.args if arg.keyword is None and not arg.star]
        target = self.ctx.text(positional[0].value) if positional else ""
        self.add_override("lora", True, node, target, f"{last_name(node.func)}() adds LoRA adapters")

    @staticmethod
    def gated_override(
        name: str, setting: Setting, target: str, when: Optional[FlagCondition], applied: Value,
        assigns_argument: bool = False,
    ) -> Override:
        if when is None or isinstance(applied, Unknown):
            return Override(name, setting, target, assigns_argument=assigns_argument)
        return Override(name, setting, target, when=when.argument, when_negated=when.negated, when_value=applied,
                        assigns_argument=assigns_argument)

    # ------------------------------------------------ assignments after parsing
    def assignment(self, target: cst.BaseExpression, value: CstExpr, statement: cst.CSTNode) -> None:
        self.attribute_override(target, value, statement)
        self.attention_assignment(target, value)
        self.module_checkpointing_assignment(target, value, statement)

    def module_checkpointing_assignment(self, target: cst.BaseExpression, value: CstExpr,
                                        statement: cst.CSTNode) -> None:
        """`model.vision_model.encoder.gradient_checkpointing = True`: a module told to checkpoint in code
        (InternVL's entry scripts), which is checkpointing on as much as `gradient_checkpointing_enable()`.
        An argument namespace's field (`training_args.gradient_checkpointing = ...`) is a plain override."""
        if not (isinstance(target, cst.Attribute) and target.attr.value == "gradient_checkpointing"):
            return
        owner = target.value
        if isinstance(owner, cst.Name) and CONVENTIONAL_ARGS_NAME.match(owner.value):
            return
        if literal_value(value) is True:
            text = self.ctx.text(target)
            self.add_override("gradient_checkpointing", True, statement, self.ctx.text(owner), f"{text} = True")

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

    def attribute_override(self, target: cst.BaseExpression, value: Optional[CstExpr], statement: cst.CSTNode) -> None:
        if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)):
            return
        owner = target.value.value
        if not self.values.is_args_name(owner):
            return
        ctx = self.ctx
        name = target.attr.value
        conditions = ctx.conditions(statement)
        if any(branch.requires_flag(name) for branch in conditions):
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
            self.findings.overrides.append(Override(name, setting, owner, assigns_argument=True))
            return
        keyword = self.values.keyword(name, value, SourceKind.CODE_OVERRIDE, note)
        setting = keyword.setting
        applied = setting.value if keyword.reference is None else Unknown("follows another argument")
        if conditions:
            setting = Setting(
                Unknown(condition_reason(ctx, conditions[0])), setting.kind, setting.origin, setting.text, note=note
            )
        when = self.flag_condition(conditions)
        override = self.gated_override(name, setting, owner, when, applied, assigns_argument=True)
        if keyword.reference is not None and not keyword.negated and not conditions:
            override = replace(override, reference=keyword.reference)
        self.findings.overrides.append(override)


def _dotted_argument(test: cst.Attribute, is_args_name) -> Optional[str]:
    """The parsed argument an attribute reads: `args.flag` reads `flag`; `args.model.flag` reads the dest
    `model.flag`, which argparse gives an option spelt `--model.flag` (a script that regroups the parsed
    namespace by its dots reads it so). None when the chain does not start at a parsed namespace."""
    parts = [test.attr.value]
    owner: CstExpr = test.value
    while isinstance(owner, cst.Attribute):
        parts.append(owner.attr.value)
        owner = owner.value
    if not (isinstance(owner, cst.Name) and is_args_name(owner.value)):
        return None
    return ".".join(reversed(parts))


def _nonzero_test(test: CstExpr) -> CstExpr:
    """`args.lora_dim > 0` and `args.lora_dim != 0` test what `args.lora_dim` does for the counts and
    ranks they compare (never negative): the left side stands for the test."""
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        if isinstance(target.operator, (cst.GreaterThan, cst.NotEqual)) and literal_value(target.comparator) == 0:
            return test.left
    return test
