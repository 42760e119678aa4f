"""LLaMA-Factory: recipes in TrainingArguments spelling with switches of its own."""
from __future__ import annotations

from dataclasses import replace
from typing import Mapping

from trainlint.core import Launcher, Setting, SourceKind
from trainlint.knobs import ARGS, K, coerce
from trainlint.resolution.frameworks.adapters import derive_adapter_method
from trainlint.resolution.frameworks.base import Derivation, DeriveContext, Framework, Stage
from trainlint.resolution.frameworks.memory_features import (
    FUSED_LOSS,
    MODEL_PARALLEL,
    SEQUENCE_PARALLEL,
    add_degree,
    add_switch,
    is_on,
    whole,
)
from trainlint.resolution.precedence import Candidates

# Stages whose loss needs no logits tensor: LLaMA-Factory keeps Liger's fused linear cross-entropy on for them.
_FUSED_LOSS_STAGES = ("sft", "pt")


def _memory_features(written: Mapping[str, Setting], candidates: Candidates) -> None:
    """LLaMA-Factory keys that change what a GPU holds (docs/memory-model.md §17)."""
    liger = written.get("enable_liger_kernel")
    stage = written.get("stage")
    if is_on(liger) and (stage is None or str(stage.value).strip().lower() in _FUSED_LOSS_STAGES):
        add_switch(candidates, FUSED_LOSS, liger, "enable_liger_kernel (fused linear cross-entropy)")
    add_degree(candidates, SEQUENCE_PARALLEL, written, ("sequence_parallel_size",))
    degrees = [whole(written.get(key)) for key in ("tensor_model_parallel_size", "pipeline_model_parallel_size")]
    product = 1
    for degree in degrees:
        product *= degree if degree and degree > 1 else 1
    if product > 1:
        via = tuple(written[key] for key in ("tensor_model_parallel_size", "pipeline_model_parallel_size")
                    if key in written)
        candidates.add(MODEL_PARALLEL, Setting(product, SourceKind.DERIVED, None, via=via,
                                               note="Megatron tensor/pipeline parallelism"))


def _defaults(written: Mapping[str, Setting], candidates: Candidates) -> None:
    """LLaMA-Factory turns gradient checkpointing on unless `disable_gradient_checkpointing: true`."""
    _memory_features(written, candidates)
    disabled = written.get("disable_gradient_checkpointing")
    if disabled is not None and coerce(K.GRADIENT_CHECKPOINTING, disabled.value).value is True:
        candidates.add(K.GRADIENT_CHECKPOINTING, replace(disabled, value=False, note="disable_gradient_checkpointing"))
    else:
        candidates.add(K.GRADIENT_CHECKPOINTING, Setting(True, SourceKind.FRAMEWORK_DEFAULT, None,
                                                         note="LLaMA-Factory default"))


def _derive_adapter(candidates: Candidates, context: DeriveContext) -> None:
    derive_adapter_method(candidates, "finetuning_type")


def _derive_pure_bf16(candidates: Candidates, context: DeriveContext) -> None:
    """`pure_bf16` casts the whole model to bf16: half precision with no fp32 copy."""
    pure = candidates.winner(K.PURE_BF16)
    if pure is not None and pure.value is True:
        # Derived (no origin of its own): a fix of bf16 must not rewrite the `pure_bf16` key.
        candidates.add(K.BF16, Setting(True, SourceKind.DERIVED, None, via=(pure,), note="pure_bf16"))
        if candidates.winner(K.TORCH_DTYPE) is None:
            candidates.add(K.TORCH_DTYPE, Setting("bfloat16", SourceKind.DERIVED, None, via=(pure,), note="pure_bf16"))


LLAMAFACTORY = Framework(
    name="llamafactory",
    namespace=ARGS,
    defaults=_defaults,
    derivations=(Derivation(Stage.ADAPTER, _derive_adapter), Derivation(Stage.PRECISION, _derive_pure_bf16)),
    launcher=Launcher.LLAMAFACTORY_CLI,
)
