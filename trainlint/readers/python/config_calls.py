"""Keyword calls that pin settings: `TrainingArguments(...)` and TRL configs, plus the other calls whose
keywords decide a knob (`Accelerator(...)`, `DataLoader(...)`, `from_pretrained(...)`, `get_peft_model(...)`)."""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping, Optional, Tuple

import libcst as cst

from trainlint.core import Diagnostic, Setting, SourceKind
from trainlint.readers.facts import (
    ATTENTION_PATCH_CALLEE,
    CLASSIFICATION_HEAD,
    LEGACY_PPO_CONFIG,
    TRL_CONFIGS,
    ConfigCall,
    Gate,
    Keyword,
)
from trainlint.readers.python.context import empty_origin
from trainlint.readers.python.expressions import keyword_args, literal_value
from trainlint.readers.python.findings import Findings
from trainlint.readers.python.gates import GateReader
from trainlint.readers.python.values import ValueReader

# `from_pretrained(use_flash_attention_2=True)`: FlashAttention-2 as transformers 4.34 and 4.35 asked for it.
LEGACY_FLASH_KEYWORD = "use_flash_attention_2"
# Calls outside the trainer config whose keywords pin a knob, by callee name (last component).
OTHER_CALL_KEYWORDS: Mapping[str, Tuple[str, ...]] = {
    "Accelerator": ("gradient_accumulation_steps", "mixed_precision"),
    "DataLoader": ("batch_size",),
    "from_pretrained": ("attn_implementation", "torch_dtype", "dtype", "load_in_4bit", "load_in_8bit"),
    "BitsAndBytesConfig": ("load_in_4bit", "load_in_8bit"),
    "LoraConfig": ("r", "modules_to_save"),
}


# Model classes whose head scores labels (HF's naming: `AutoModelForSequenceClassification`,
# `LlamaForSequenceClassification`, a repository's own `Qwen2VLForSequenceClassification`).
_CLASSIFICATION_CLASSES = ("ForSequenceClassification", "ForTokenClassification")

# TRL's PPOConfig before 0.12 was a dataclass of its own (a rollout `batch_size`, `ppo_epochs`, `log_with`),
# not TrainingArguments; 0.12 gave the name to the TrainingArguments-based one. A call with a field only the
# old class has is the old class: its keywords are no trainer settings, and it brings no trainer defaults.
LEGACY_PPO_FIELDS = frozenset(
    {
        "log_with", "task_name", "model_name", "query_dataset", "reward_model", "tracker_kwargs",
        "accelerator_kwargs", "project_kwargs", "tracker_project_name", "push_to_hub_if_best_kwargs", "steps",
        "adap_kl_ctrl", "init_kl_coef", "kl_penalty", "target", "horizon", "forward_batch_size", "ppo_epochs",
        "optimize_cuda_cache", "optimize_device_cache", "early_stopping", "target_kl", "compare_steps",
        "ratio_threshold", "use_score_scaling", "use_score_norm", "score_clip", "is_encoder_decoder",
        "is_peft_model", "backward_batch_size", "global_backward_batch_size", "global_batch_size",
    }
)


def is_config_class(callee: str) -> bool:
    """Whether a call's keywords are TrainingArguments fields."""
    return callee.endswith("TrainingArguments") or callee in TRL_CONFIGS


class ConfigCallReader:
    """Appends what these calls pin to the file's findings."""

    def __init__(self, values: ValueReader, findings: Findings):
        self.values = values
        self.ctx = values.ctx
        self.findings = findings
        self.gates = GateReader(values)

    def config_call(self, node: cst.Call) -> None:
        ctx = self.ctx
        callee = ctx.text(node.func)
        if callee.rsplit(".", 1)[-1] == "PPOConfig" and LEGACY_PPO_FIELDS.intersection(keyword_args(node)):
            setting = Setting(True, SourceKind.CODE_KEYWORD, ctx.origin(node), ctx.text(node),
                              note="a PPOConfig of TRL before 0.12")
            self.findings.other_keywords.append((LEGACY_PPO_CONFIG, Keyword("called", setting)))
            return
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
        called = Keyword("called", setting, gates=self.gates.around(node))
        self.findings.other_keywords.append(("get_peft_model", called))

    def attention_patch(self, node: cst.Call, family: str, function: str) -> None:
        ctx = self.ctx
        # `written_as` is the patch function's name, which says its kernel (facts.ATTENTION_PATCH).
        setting = Setting(family, SourceKind.CODE_KEYWORD, ctx.origin(node), ctx.text(node),
                          note=f"{ctx.short(node.func)}() replaces {family}'s eager attention", written_as=function)
        self.findings.other_keywords.append((ATTENTION_PATCH_CALLEE, Keyword("called", setting,
                                                                            gates=self.gates.around(node))))

    def knob_keywords(self, node: cst.Call, callee: str) -> None:
        if callee == "from_pretrained" and isinstance(node.func, cst.Attribute) \
                and self.ctx.text(node.func.value).endswith(_CLASSIFICATION_CLASSES):
            ctx = self.ctx
            setting = Setting(True, SourceKind.CODE_KEYWORD, ctx.origin(node.func.value), ctx.text(node.func.value),
                              note="a classification head")
            self.findings.other_keywords.append((CLASSIFICATION_HEAD, Keyword("called", setting)))
        wanted = OTHER_CALL_KEYWORDS[callee]
        gates: Optional[Tuple[Gate, ...]] = None
        for name, arg in keyword_args(node).items():
            if name in wanted:
                keyword = self.values.keyword(name, arg.value, SourceKind.CODE_KEYWORD, f"{callee}({name}=...)")
            elif callee == "from_pretrained" and name == LEGACY_FLASH_KEYWORD and literal_value(arg.value) is True:
                # transformers 4.34-4.35's switch for FlashAttention-2, before `attn_implementation` (4.36).
                ctx = self.ctx
                keyword = Keyword("attn_implementation", Setting(
                    "flash_attention_2", SourceKind.CODE_KEYWORD, ctx.origin(arg.value), ctx.text(arg.value),
                    note=f"{callee}({name}=True)", written_as=name))
            else:
                continue
            gates = self.gates.around(node) if gates is None else gates
            self.findings.other_keywords.append((callee, replace(keyword, gates=gates)))
