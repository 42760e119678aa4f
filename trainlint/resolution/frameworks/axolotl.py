"""axolotl: recipes in its own spelling (`micro_batch_size`, `base_model`, `val_set_size`)."""
from __future__ import annotations

import re
from dataclasses import replace
from typing import List, Mapping, Optional

from trainlint.core import Launcher, Setting, SourceKind, Unknown
from trainlint.knobs import AXOLOTL as AXOLOTL_SPELLING
from trainlint.knobs import K, coerce, coerce_as
from trainlint.resolution.frameworks.adapters import derive_adapter_method
from trainlint.resolution.frameworks.base import Derivation, DeriveContext, Framework, Stage
from trainlint.resolution.frameworks.memory_features import (
    ACTIVATION_OFFLOAD,
    FUSED_LOSS,
    MODEL_PARALLEL,
    PAIRED_SEQUENCES,
    REFERENCE_MODEL,
    SEQUENCE_PARALLEL,
    TEXT_ONLY_BATCHES,
    TILED_MLP,
    add_count,
    add_degree,
    add_out_of_scope,
    add_switch,
    is_on,
    plugins,
)
from trainlint.resolution.freezing import FROZEN_IN_CODE
from trainlint.resolution.precedence import Candidates


def writes_recipe(values: Mapping[str, Setting]) -> bool:
    """An axolotl recipe rather than a LLaMA-Factory one: it names keys only axolotl reads."""
    return "micro_batch_size" in values or "base_model" in values


def _memory_features(written: Mapping[str, Setting], candidates: Candidates) -> None:
    """axolotl's keys that change what a GPU holds (docs/memory-model.md §17)."""
    add_degree(candidates, SEQUENCE_PARALLEL, written, ("sequence_parallel_degree", "context_parallel_size"))
    # Tensor and expert parallelism split the model itself: out of the memory model's scope.
    add_degree(candidates, MODEL_PARALLEL, written, ("tensor_parallel_size", "expert_parallel_size"))
    for key in ("liger_fused_linear_cross_entropy", "cut_cross_entropy"):
        if is_on(written.get(key)):
            add_switch(candidates, FUSED_LOSS, written[key], key)
    for plugin in plugins(written):
        if "cut_cross_entropy" in plugin.value.lower() or "cutcrossentropy" in plugin.value.lower():
            add_switch(candidates, FUSED_LOSS, plugin, "cut cross-entropy plugin")
    if is_on(written.get("activation_offloading")):
        add_switch(candidates, ACTIVATION_OFFLOAD, written["activation_offloading"], "activation_offloading")
    checkpointing = written.get("gradient_checkpointing")
    if checkpointing is not None and str(checkpointing.value).strip().lower() == "offload":
        add_switch(candidates, ACTIVATION_OFFLOAD, checkpointing, "gradient_checkpointing: offload")
    if is_on(written.get("tiled_mlp")):
        add_switch(candidates, TILED_MLP, written["tiled_mlp"], "tiled_mlp")
    for plugin in plugins(written):
        if "hatchery" in plugin.value.lower():
            # The Hatchery plugin replaces local training with calls to a remote Hatchery/Tinker service.
            add_out_of_scope(candidates, plugin, "the Hatchery plugin trains on a remote service, not on local GPUs")
    _attention(written, candidates)
    _load_dtype(written, candidates)
    _text_only(written, candidates)
    _preference(written, candidates)
    _unfrozen_parameters(written, candidates)


def _text_only(written: Mapping[str, Setting], candidates: Candidates) -> None:
    """axolotl loads a processor, and with it the multimodal collator that turns images into pixel values and image
    tokens, only when `processor_type` names one (common/datasets.py, core/builders/causal.py): without it a
    multimodal checkpoint trains on text rows alone, its vision tower loaded but never run."""
    processor = written.get("processor_type")
    value = processor.value if processor is not None else None
    # Written empty (`processor_type:`) is null to axolotl, as if absent; a value not known here decides nothing.
    if value is not None and not (isinstance(value, str) and not value.strip()):
        return
    candidates.add(TEXT_ONLY_BATCHES, Setting(True, SourceKind.FRAMEWORK_DEFAULT, None,
                                              note="axolotl: no processor_type, so no image reaches the model"))


# A pattern of `unfrozen_parameters` naming the whole language model of a multimodal model (`model.language_model.*`,
# how axolotl's multimodal recipes freeze the vision tower alone).
_WHOLE_LANGUAGE_MODEL = re.compile(r"\^?(?:model\.)?language_model(?:\.\*|\.|\*)?\$?")
_SPECTRUM_PLUGIN = "spectrum"


def _unfrozen_parameters(written: Mapping[str, Setting], candidates: Candidates) -> None:
    """`unfrozen_parameters` freezes every parameter whose name none of its patterns matches (train.py calls
    utils/freeze.py's `freeze_layers_except`), and the Spectrum plugin writes those patterns from its own scan at
    start-up. Which parameters then train is the patterns' business: unknown to the memory model, which counts the
    LLM frozen (FROZEN_IN_CODE), unless a pattern names the whole language model, which then trains as usual."""
    patterns: List[Setting] = [setting for key, setting in written.items()
                               if (key == "unfrozen_parameters" or key.startswith("unfrozen_parameters."))
                               and isinstance(setting.value, str) and setting.value.strip()]
    if any(_WHOLE_LANGUAGE_MODEL.fullmatch(pattern.value.strip()) for pattern in patterns):
        return
    if patterns:
        shown = ", ".join(f"`{pattern.value.strip()}`" for pattern in patterns[:3]) + (", ..." if len(patterns) > 3
                                                                                       else "")
        note = f"axolotl's unfrozen_parameters trains only the parameters its patterns match ({shown})"
        candidates.add(FROZEN_IN_CODE, replace(patterns[0], value=True, kind=SourceKind.DERIVED, via=(patterns[0],),
                                               note=note))
        return
    for plugin in plugins(written):
        if _SPECTRUM_PLUGIN in plugin.value.lower():
            note = "the Spectrum plugin trains only the layers its signal-to-noise scan selects"
            candidates.add(FROZEN_IN_CODE, replace(plugin, value=True, kind=SourceKind.DERIVED, via=(plugin,),
                                                   note=note))
            return


# `rl:` values whose TRL trainer puts each pair's chosen and rejected answers in one batch (DPOTrainer's collator
# returns them as the two halves of one batch, trl/trainer/dpo_trainer.py; ORPO's and CPO's `concatenated_forward`).
_PAIRED_RL = ("dpo", "ipo", "orpo", "simpo")
# `rl:` values whose trainer takes the reference model axolotl loads (`setup_reference_model`, src/axolotl/train.py:
# none for ORPO, none with an adapter unless `rl_adapter_ref_model`).
_REFERENCE_RL = ("dpo", "ipo", "kto")


def _preference(written: Mapping[str, Setting], candidates: Candidates) -> None:
    rl = written.get("rl")
    name = str(rl.value).strip().lower() if rl is not None and isinstance(rl.value, str) else None
    if rl is None or name is None:
        return
    if name in _PAIRED_RL:
        add_count(candidates, PAIRED_SEQUENCES, 2, rl, f"rl {name}: chosen and rejected answers in one batch")
    adapter = written.get("adapter")
    has_adapter = adapter is not None and bool(str(adapter.value).strip())
    if name in _REFERENCE_RL and not has_adapter:
        add_switch(candidates, REFERENCE_MODEL, rl, f"rl {name}: a frozen reference copy of the model")


# axolotl's attention switches (older releases) -> the implementation each selects.
_ATTENTION_SWITCHES = (("flash_attention", "flash_attention_2"), ("xformers_attention", "flash_attention_2"),
                       ("flex_attention", "flash_attention_2"), ("sdp_attention", "sdpa"),
                       ("eager_attention", "eager"))


def _attention(written: Mapping[str, Setting], candidates: Candidates) -> None:
    named = written.get("attn_implementation")
    if named is not None and isinstance(named.value, str) and named.value.strip():
        candidates.add(K.ATTN_IMPLEMENTATION, named)
        return
    for key, implementation in _ATTENTION_SWITCHES:
        if is_on(written.get(key)):
            candidates.add(K.ATTN_IMPLEMENTATION, replace(written[key], value=implementation, kind=SourceKind.DERIVED,
                                                          origin=None, via=(written[key],), note=key))
            return


_PRECISION_KEYS = ("bf16", "bfloat16", "fp16", "float16")


def _load_dtype(written: Mapping[str, Setting], candidates: Candidates) -> None:
    """axolotl loads the model in `torch_dtype`, which it sets from `bf16` (true or auto) and `fp16`.
    Unwritten, `bf16` is "auto" (utils/schemas/config.py), which `resolve_dtype` turns on where the GPU has bf16
    and replaces with fp16 elsewhere (utils/config/__init__.py): a recipe naming no precision trains in 16 bits."""
    if "torch_dtype" in written:
        return
    if not any(key in written for key in _PRECISION_KEYS):
        auto = Setting("auto", SourceKind.FRAMEWORK_DEFAULT, None, note="axolotl default (bf16: auto)")
        candidates.add(K.BF16, auto)
        candidates.add(K.TORCH_DTYPE, Setting("bfloat16", SourceKind.DERIVED, None, via=(auto,),
                                              note="axolotl loads the model in 16 bits (bf16: auto)"))
        return
    for key, dtype in (("bf16", "bfloat16"), ("bfloat16", "bfloat16"), ("fp16", "float16"), ("float16", "float16")):
        setting = written.get(key)
        if setting is not None and (is_on(setting) or str(setting.value).strip().lower() == "auto"):
            candidates.add(K.TORCH_DTYPE, Setting(dtype, SourceKind.DERIVED, None, via=(setting,),
                                                  note=f"axolotl loads the model in {dtype} ({key})"))
            return


def _defaults(written: Mapping[str, Setting], candidates: Candidates) -> None:
    """axolotl evaluates whenever a validation split is set: every `eval_steps`, else per epoch.
    Unset, its eval batch is the micro-batch and it trains one epoch."""
    micro = written.get("micro_batch_size")
    if micro is not None and "eval_batch_size" not in written:
        candidates.add(K.PER_DEVICE_EVAL_BATCH_SIZE, Setting(micro.value, SourceKind.DERIVED, None, via=(micro,),
                                                             note="axolotl: eval_batch_size = micro_batch_size"))
    _memory_features(written, candidates)
    if "num_epochs" not in written:
        candidates.add(K.NUM_TRAIN_EPOCHS, Setting(1, SourceKind.FRAMEWORK_DEFAULT, None, note="axolotl default"))
    split = written.get("val_set_size")
    if split is None or not isinstance(split.value, (int, float)) or split.value <= 0:
        return
    # A key written with no value (`eval_steps:`) is null to axolotl, as if absent: `evals_per_epoch` then
    # decides the interval (utils/config normalizes it into eval_steps).
    stated_steps = _stated(written, "eval_steps")
    per_epoch = _stated(written, "evals_per_epoch")
    strategy = "steps" if stated_steps is not None or per_epoch is not None else "epoch"
    candidates.add(K.EVAL_STRATEGY, replace(split, value=strategy, via=(split,), note=f"val_set_size {split.value}"))
    if per_epoch is not None and stated_steps is None:
        ratio = _eval_ratio(per_epoch, written.get("num_epochs"))
        if "eval_steps" in written:
            # Written empty: axolotl's normalization sets it from evals_per_epoch after loading the file.
            ratio = replace(ratio, kind=SourceKind.CODE_OVERRIDE)
        candidates.add(K.EVAL_STEPS, ratio)


def _stated(written: Mapping[str, Setting], key: str) -> Optional[Setting]:
    setting = written.get(key)
    return setting if setting is not None and setting.value is not None else None


def _eval_ratio(per_epoch: Setting, epochs: Optional[Setting]) -> Setting:
    """axolotl turns `evals_per_epoch` into `eval_steps = 1 / (evals_per_epoch × num_epochs)`, a
    fraction of the run's steps (num_epochs defaults to 1)."""
    count = coerce_as(int, per_epoch.value).value
    epoch_count = coerce(K.NUM_TRAIN_EPOCHS, epochs.value).value if epochs is not None else 1
    via = tuple(s for s in (per_epoch, epochs) if s is not None)
    if not isinstance(count, int) or isinstance(epoch_count, (Unknown, str)) or epoch_count is None \
            or count <= 0 or epoch_count <= 0:
        return Setting(Unknown("axolotl computes eval_steps from evals_per_epoch and num_epochs"),
                       SourceKind.DERIVED, None, via=via, note="evals_per_epoch")
    ratio = 1.0 / (count * epoch_count)
    if ratio >= 1:
        return Setting(Unknown(f"evals_per_epoch {count} over {epoch_count} epochs gives no step interval"),
                       SourceKind.DERIVED, None, via=via, note="evals_per_epoch")
    return Setting(ratio, SourceKind.DERIVED, None, via=via,
                   note=f"1 / (evals_per_epoch {count} × num_epochs {epoch_count})")


def _derive_adapter(candidates: Candidates, context: DeriveContext) -> None:
    derive_adapter_method(candidates, "adapter")


AXOLOTL = Framework(
    name="axolotl",
    namespace=AXOLOTL_SPELLING,
    defaults=_defaults,
    derivations=(Derivation(Stage.ADAPTER, _derive_adapter),),
    launcher=Launcher.AXOLOTL,
)
