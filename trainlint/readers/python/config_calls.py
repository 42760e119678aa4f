"""Keyword calls that pin settings: `TrainingArguments(...)` and TRL configs, plus the other calls whose
keywords decide a knob (`Accelerator(...)`, `DataLoader(...)`, `from_pretrained(...)`, `get_peft_model(...)`)."""

from __future__ import annotations

from typing import Mapping, Tuple

import libcst as cst

from trainlint.core import Diagnostic, Setting, SourceKind
from trainlint.readers.facts import ConfigCall, Keyword
from trainlint.readers.python.context import empty_origin
from trainlint.readers.python.expressions import keyword_args
from trainlint.readers.python.findings import Findings
from trainlint.readers.python.values import ValueReader

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
    "LoraConfig": ("r", "modules_to_save"),
}


def is_config_class(callee: str) -> bool:
    """Whether a call's keywords are TrainingArguments fields."""
    return callee.endswith("TrainingArguments") or callee in TRL_CONFIGS


class ConfigCallReader:
    """Appends what these calls pin to the file's findings."""

    def __init__(self, values: ValueReader, findings: Findings):
        self.values = values
        self.ctx = values.ctx
        self.findings = findings

    def config_call(self, node: cst.Call) -> None:
        ctx = self.ctx
        callee = ctx.text(node.func)
        keywords = []
        for arg in node.args:
            if arg.keyword is not None:
                note = f"{callee}({arg.keyword.value}=...)"
                keywords.append(self.values.keyword(arg.keyword.value, arg.value, SourceKind.CODE_KEYWORD, note,
                                                    written_as=arg.keyword.value))
            elif arg.star:
                origin = ctx.origin(arg)
                message = f"{origin}: `{ctx.short(arg)}` passes keywords to {callee} that cannot be read statically"
                self.findings.diagnostics.append(Diagnostic("config-call-splat", message, ctx.source.path, origin))
        origin = ctx.origin(node) or empty_origin(ctx.source)
        self.findings.config_calls.append(ConfigCall(callee, tuple(keywords), origin))

    def peft_call(self, node: cst.Call) -> None:
        ctx = self.ctx
        setting = Setting(
            True, SourceKind.CODE_KEYWORD, ctx.origin(node), ctx.text(node), note="get_peft_model() is called"
        )
        self.findings.other_keywords.append(("get_peft_model", Keyword("called", setting)))

    def knob_keywords(self, node: cst.Call, callee: str) -> None:
        wanted = OTHER_CALL_KEYWORDS[callee]
        for name, arg in keyword_args(node).items():
            if name in wanted:
                keyword = self.values.keyword(name, arg.value, SourceKind.CODE_KEYWORD, f"{callee}({name}=...)")
                self.findings.other_keywords.append((callee, keyword))
