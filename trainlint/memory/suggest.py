"""'What would make it fit': changes to a job's settings, each with its new estimate
(docs/memory-model.md §14)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional

from trainlint.core import MemoryEstimate, TrainingRun, Value
from trainlint.knobs import K
from trainlint.memory.assembly import estimate
from trainlint.memory.cost import job_inputs
from trainlint.memory.fitting import largest_fitting_batch, split_keeping_product
from trainlint.memory.gpus import Gpu
from trainlint.memory.inputs import KnobReader, adapter_inputs_remedy, offloaded, out_of_scope
from trainlint.memory.terms import MemoryTerm

# A change must lower the peak by more than this (GiB) to be worth proposing.
SMALLEST_USEFUL_SAVING_GIB = 0.05
# Sequence lengths are not proposed below this, nor below the image tokens plus some text.
SHORTEST_SUGGESTED_LENGTH = 512
TEXT_TOKENS_KEPT_NEXT_TO_IMAGES = 256


@dataclass(frozen=True)
class Suggestion:
    """A change that would make the run fit (or fit better), with its new estimate."""

    description: str
    overrides: Mapping[str, Value]
    estimate: MemoryEstimate
    # Training math unchanged (same effective batch, same model updates) or not.
    preserves_training: bool = True


def suggestions(run: TrainingRun, gpu: Gpu, max_items: int = 8,
                base: Optional[Mapping[str, Value]] = None) -> List[Suggestion]:
    """'What would make it fit': each change with its knob overrides and new estimate, the ones that
    fit first (training-preserving before the rest), then by peak. `base`: overrides every estimate here starts
    from (a verdict's floor: the least an unknown config or GPU count leaves on a GPU)."""
    base = dict(base or {})
    current = estimate(run, gpu, base)
    if not current.model or out_of_scope(run):
        return []  # no model, or a figure the model does not stand behind: nothing to propose on it
    knobs = KnobReader(run, None)
    out: List[Suggestion] = []

    def add(description: str, overrides: Dict[str, Value], preserves: bool) -> None:
        new = estimate(run, gpu, {**base, **overrides})
        if new.peak_gib < current.peak_gib - SMALLEST_USEFUL_SAVING_GIB:
            out.append(Suggestion(description, dict(overrides), new, preserves))

    inputs = job_inputs(run)
    batch = knobs.int(K.PER_DEVICE_TRAIN_BATCH_SIZE)
    accum = knobs.int(K.GRADIENT_ACCUMULATION_STEPS) or 1
    if batch and batch > 1:
        fitting = largest_fitting_batch(run, gpu, max_batch=batch - 1, overrides=base) or 1
        split = split_keeping_product(batch * accum, min(fitting, batch - 1))
        add(f"per-device batch {batch} -> {split.micro_batch} with gradient accumulation {accum} -> "
            f"{split.accumulation} (same effective batch)",
            {"per_device_train_batch_size": split.micro_batch, "gradient_accumulation_steps": split.accumulation},
            True)
    if knobs.bool(K.GRADIENT_CHECKPOINTING) is not True:
        wrapper = inputs.checkpointing_breaks_adapters if inputs is not None else ""
        add(f"turn on gradient checkpointing, once {adapter_inputs_remedy(wrapper)}" if wrapper
            else "turn on gradient checkpointing", {"gradient_checkpointing": True}, True)
    if ((knobs.str(K.ATTN_IMPLEMENTATION) or "") in ("", "eager")
            and current.breakdown.get(MemoryTerm.ACTIVATIONS.value, 0) > 0):
        add("use FlashAttention-2 / SDPA instead of eager attention", {"attn_implementation": "flash_attention_2"},
            True)
    zero = knobs.int(K.ZERO_STAGE)
    world = knobs.int(K.WORLD_SIZE) or 1
    quantized = inputs is not None and inputs.quantized_base  # ZeRO-3 would stop it at start-up
    if world > 1 and zero != 3 and not quantized:
        add("DeepSpeed ZeRO-3 (shard weights, gradients and optimizer states)", {"zero_stage": 3}, True)
    if not offloaded(knobs.str(K.OFFLOAD_OPTIMIZER)):
        stage = zero if zero in (1, 2, 3) else 2
        add(f"ZeRO-{stage} with the optimizer offloaded to CPU",
            {"zero_stage": stage, "offload_optimizer": "cpu"}, True)
    if zero == 3 and not offloaded(knobs.str(K.OFFLOAD_PARAM)):
        add("ZeRO-3 with parameters and optimizer offloaded to CPU",
            {"offload_optimizer": "cpu", "offload_param": "cpu"}, True)
    if not knobs.bool(K.LORA) and (knobs.int(K.BITS) or 16) == 16:
        add("LoRA (train adapters, freeze the base)", {"lora": True}, False)
    elif (knobs.int(K.BITS) or 16) == 16:
        add("QLoRA (4-bit base)", {"lora": True, "bits": 4}, False)
    seq = knobs.int(K.MAX_SEQ_LENGTH) or current.sequence_tokens
    if seq and seq > SHORTEST_SUGGESTED_LENGTH:
        shorter = max(SHORTEST_SUGGESTED_LENGTH, seq // 2, current.image_tokens + TEXT_TOKENS_KEPT_NEXT_TO_IMAGES)
        if shorter < seq:
            add(f"shorter sequence: max length {seq} -> {shorter}", {"max_seq_length": shorter}, False)
    tiles = knobs.int(K.IMAGE_TILES)
    if tiles and tiles > 1:
        add(f"fewer image tiles: {tiles} -> {max(1, tiles // 2)}", {"image_tiles": max(1, tiles // 2)}, False)
    out.sort(key=lambda s: (not s.estimate.fits, not s.preserves_training, s.estimate.peak_gib))
    return out[:max_items]
