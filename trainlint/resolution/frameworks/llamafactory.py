"""LLaMA-Factory: recipes in TrainingArguments spelling with switches of its own."""
from __future__ import annotations

from dataclasses import replace
from typing import Mapping, Optional

from trainlint.core import Launcher, Setting, SourceKind
from trainlint.knobs import ARGS, K, coerce_as
from trainlint.resolution.frameworks.adapters import derive_adapter_method
from trainlint.resolution.frameworks.base import Derivation, DeriveContext, Framework, Stage
from trainlint.resolution.frameworks.memory_features import (
    ACTIVATION_OFFLOAD,
    FUSED_LOSS,
    IN_PLACE_LOSS,
    MODEL_PARALLEL,
    PAIRED_SEQUENCES,
    REFERENCE_MODEL,
    SEQUENCE_PARALLEL,
    add_count,
    add_degree,
    add_out_of_scope,
    add_switch,
    is_on,
    whole,
)
from trainlint.resolution.precedence import Candidates

# Stages whose loss the model computes itself (needing no logits tensor): LLaMA-Factory keeps Liger's fused linear
# cross-entropy on for them, and unsloth's forward runs its own cross-entropy kernel for them.
_FUSED_LOSS_STAGES = ("sft", "pt")


# Keys only LLaMA-Factory's argument classes define (hparams/*.py): none of them is a field of HF's
# TrainingArguments or of TRL's configs, so a recipe naming one is LLaMA-Factory's.
_OWN_KEYS = frozenset({
    "stage", "finetuning_type", "template", "cutoff_len", "dataset_dir", "lora_target", "quantization_bit",
    "flash_attn", "use_unsloth", "use_unsloth_gc", "additional_target", "pref_beta", "pref_loss", "plot_loss",
    "freeze_trainable_layers", "freeze_trainable_modules", "neat_packing", "val_size", "max_samples",
    "mix_strategy", "image_max_pixels", "video_max_pixels", "pure_bf16", "disable_gradient_checkpointing",
})


def writes_recipe(values: Mapping[str, Setting]) -> bool:
    """A LLaMA-Factory recipe rather than a file of plain HF arguments: it names keys only LLaMA-Factory reads."""
    return any(key.split(".", 1)[0] in _OWN_KEYS for key in values)


def _unsloth(written: Mapping[str, Setting], candidates: Candidates, model_computes_loss: bool) -> None:
    """`use_unsloth` loads the model through unsloth with `use_gradient_checkpointing="unsloth"`
    (src/llamafactory/model/model_utils/unsloth.py): unsloth's checkpointing copies each checkpointed layer
    input to the CPU (Unsloth_Offloaded_Gradient_Checkpointer, unsloth/models/_utils.py), and its causal-LM
    forward hands the 16-bit logits to Fast_CrossEntropyLoss, which writes their gradient in place
    (unsloth/kernels/cross_entropy_loss.py; releases from 2025.8 chunk the loss further, so this is the
    larger of the two). `use_unsloth_gc` wraps LLaMA-Factory's own checkpointing in the same CPU copy
    (model_utils/checkpointing.py) and leaves the loss alone."""
    unsloth = written.get("use_unsloth")
    if is_on(unsloth):
        add_switch(candidates, ACTIVATION_OFFLOAD, unsloth, "use_unsloth (unsloth gradient checkpointing on the CPU)")
        if model_computes_loss:
            add_switch(candidates, IN_PLACE_LOSS, unsloth, "use_unsloth (cross-entropy in place on 16-bit logits)")
    elif is_on(written.get("use_unsloth_gc")):
        add_switch(candidates, ACTIVATION_OFFLOAD, written["use_unsloth_gc"], "use_unsloth_gc")


def _packing(written: Mapping[str, Setting], candidates: Candidates, stage: Optional[Setting]) -> None:
    """`packing` left unset is on for pre-training only (DataArguments.packing, src/llamafactory/hparams/
    data_args.py); `neat_packing` implies it."""
    if "packing" in written or "neat_packing" in written:
        return
    if stage is not None and str(stage.value).strip().lower() == "pt":
        candidates.add(K.PACKING, Setting(True, SourceKind.FRAMEWORK_DEFAULT, None,
                                          note="LLaMA-Factory default for stage pt"))


# Stages whose collator puts each pair's chosen and rejected answers in one batch (PairwiseDataCollatorWithPadding,
# src/llamafactory/data/collator.py: "2 * n examples"; train/rm and train/dpo workflows).
_PAIRED_STAGES = ("rm", "dpo")
# DPO losses that need no reference model (FinetuningArguments.use_ref_model, hparams/finetuning_args.py).
_REFERENCE_FREE_LOSSES = ("orpo", "simpo")


def _text(setting: Optional[Setting]) -> Optional[str]:
    return str(setting.value).strip().lower() if setting is not None and isinstance(setting.value, str) else None


def _preference(written: Mapping[str, Setting], candidates: Candidates, stage: Optional[Setting]) -> None:
    """Reward modelling and DPO put both answers of a pair in one batch. DPO (unless `pref_loss` is orpo or
    simpo) and KTO keep a frozen reference model: `create_ref_model` (train/trainer_utils.py) loads a copy of
    the model for full and freeze tuning when no `ref_model` is named, and none for LoRA (the adapter-free base
    serves). A `ref_model` named by path is another model whose size is not read: not counted."""
    name = _text(stage)
    if stage is None or name is None:
        return
    if name in _PAIRED_STAGES:
        add_count(candidates, PAIRED_SEQUENCES, 2, stage, f"stage {name}: chosen and rejected answers in one batch")
    loss = _text(written.get("pref_loss")) or "sigmoid"
    uses_reference = (name == "dpo" and loss not in _REFERENCE_FREE_LOSSES) or name == "kto"
    method = _text(written.get("finetuning_type")) or "lora"
    if uses_reference and "ref_model" not in written and method in ("full", "freeze"):
        add_switch(candidates, REFERENCE_MODEL, stage, f"stage {name}: a frozen reference copy of the model")


def _memory_features(written: Mapping[str, Setting], candidates: Candidates) -> None:
    """LLaMA-Factory keys that change what a GPU holds (docs/memory-model.md §17)."""
    liger = written.get("enable_liger_kernel")
    stage = written.get("stage")
    model_computes_loss = stage is None or str(stage.value).strip().lower() in _FUSED_LOSS_STAGES
    if is_on(liger) and model_computes_loss:
        add_switch(candidates, FUSED_LOSS, liger, "enable_liger_kernel (fused linear cross-entropy)")
    _unsloth(written, candidates, model_computes_loss)
    _packing(written, candidates, stage)
    _preference(written, candidates, stage)
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
    kt = written.get("use_kt")
    if is_on(kt):
        # KTransformers runs the MoE experts on the CPU (AMX kernels) and keeps only the rest on the GPU.
        add_out_of_scope(candidates, kt, "use_kt: KTransformers keeps the MoE experts in CPU memory")


def _defaults(written: Mapping[str, Setting], candidates: Candidates) -> None:
    """LLaMA-Factory turns gradient checkpointing on unless `disable_gradient_checkpointing: true`, and trains
    LoRA adapters of rank 8 unless told otherwise."""
    _memory_features(written, candidates)
    disabled = written.get("disable_gradient_checkpointing")
    if disabled is not None and coerce_as(bool, disabled.value).value is True:
        candidates.add(K.GRADIENT_CHECKPOINTING, replace(disabled, value=False, note="disable_gradient_checkpointing"))
    else:
        candidates.add(K.GRADIENT_CHECKPOINTING, Setting(True, SourceKind.FRAMEWORK_DEFAULT, None,
                                                         note="LLaMA-Factory default"))
    if not any(key in written for key in ("lora_rank", "lora_r")):
        # FinetuningArguments.lora_rank defaults to 8 (src/llamafactory/hparams/finetuning_args.py).
        candidates.add(K.LORA_R, Setting(8, SourceKind.FRAMEWORK_DEFAULT, None, note="LLaMA-Factory default"))
    if "finetuning_type" not in written:
        # FinetuningArguments.finetuning_type defaults to "lora" (src/llamafactory/hparams/finetuning_args.py).
        candidates.add(K.FINETUNING_TYPE, Setting("lora", SourceKind.FRAMEWORK_DEFAULT, None,
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


# Fine-tuning methods whose trainable share is small: the frozen weights stay in the dtype they were loaded in.
_FROZEN_BASE_METHODS = ("lora", "oft", "freeze")


def _derive_load_dtype(candidates: Candidates, context: DeriveContext) -> None:
    """With neither `bf16` nor `fp16` set, LLaMA-Factory still loads the weights in 16 bits: `load_model` passes
    `torch_dtype="auto"` (the checkpoint's own dtype, 16-bit for released LLMs; src/llamafactory/model/loader.py)
    and `patch_config` sets `compute_dtype = infer_optim_dtype(config.torch_dtype)`, bf16 where the GPU has it
    (model/patcher.py, extras/misc.py). `init_adapter` then upcasts only the trainable parameters to fp32, and
    not at all under `use_badam` or `pure_bf16` (model/adapter.py). So the frozen base of LoRA/OFT/freeze runs,
    and every weight under BAdam, stays 16-bit; only full tuning trains in fp32."""
    if candidates.winner(K.TORCH_DTYPE) is not None:
        return
    if any(_on(candidates.winner(knob)) for knob in (K.BF16, K.FP16, K.PURE_BF16)):
        return  # mixed precision: the memory model's own rules for bf16/fp16 apply
    method = candidates.winner(K.FINETUNING_TYPE)
    badam = candidates.winner(K.USE_BADAM)
    if _on(badam):
        cause, note = badam, "use_badam keeps the checkpoint's 16-bit weights"
    elif method is not None and str(method.value).strip().lower() in _FROZEN_BASE_METHODS:
        cause, note = method, f"finetuning_type {method.value} keeps the frozen weights in the checkpoint's 16 bits"
    else:
        return
    # Derived (no origin of its own): a fix must not rewrite the key that implies it.
    candidates.add(K.TORCH_DTYPE, Setting("bfloat16", SourceKind.DERIVED, None, via=(cause,),
                                          note=f"LLaMA-Factory: {note}"))


def _on(setting: Setting | None) -> bool:
    return setting is not None and setting.value is True


LLAMAFACTORY = Framework(
    name="llamafactory",
    namespace=ARGS,
    defaults=_defaults,
    derivations=(Derivation(Stage.ADAPTER, _derive_adapter), Derivation(Stage.PRECISION, _derive_pure_bf16),
                 Derivation(Stage.PRECISION, _derive_load_dtype)),
    launcher=Launcher.LLAMAFACTORY_CLI,
)
