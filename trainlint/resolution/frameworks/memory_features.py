"""Recipe keys that change what a GPU holds, told in the knobs the memory model reads
(docs/memory-model.md §17): sequence parallelism, a loss that never builds the full logits or
never copies them, activation offloading, tiled MLPs, and parallelism the model does not cover."""
from __future__ import annotations

from dataclasses import replace
from typing import Iterable, Mapping, Optional

from trainlint.core import Setting, SourceKind
from trainlint.knobs import K, coerce, coerce_as
from trainlint.resolution.precedence import Candidates

SEQUENCE_PARALLEL = "sequence_parallel_degree"
FUSED_LOSS = "fused_linear_cross_entropy"
# The model is a classifier (a head over the labels): its logits are a few numbers per sequence.
CLASSIFIER = "classification_head"
# The loss reads the 16-bit logits and writes their gradient into the same tensor: no fp32 copy (unsloth).
IN_PLACE_LOSS = "in_place_cross_entropy"
ACTIVATION_OFFLOAD = "activation_offloading"
# No image reaches the model whatever its checkpoint holds: the framework builds its multimodal collator only when
# told to (axolotl's `processor_type`), so a vision tower loaded with the model sees no pixels and adds no tokens.
TEXT_ONLY_BATCHES = "text_only_batches"
TILED_MLP = "tiled_mlp"
MODEL_PARALLEL = "model_parallel_degree"
# The launch takes no training step: a script that trains only when asked and is not asked, or only predicts.
NO_TRAINING_STEP = "no_training_step"
# Preference training: the sequences one sample puts in the batch (2: its chosen and its rejected answer, which
# the trainer concatenates into one forward), and a frozen reference copy of the model's weights.
PAIRED_SEQUENCES = "sequences_per_sample"
REFERENCE_MODEL = "reference_model"
# The script loads an encoder-decoder model class: the prompt goes through the encoder and the response through the
# decoder, so the two length limits bound two stacks, not one row. By the name it imports from transformers.
ENCODER_DECODER = "encoder_decoder_model"
ENCODER_DECODER_CLASSES = frozenset({
    "AutoModelForSeq2SeqLM", "T5ForConditionalGeneration", "MT5ForConditionalGeneration",
    "UMT5ForConditionalGeneration", "LongT5ForConditionalGeneration", "BartForConditionalGeneration",
    "MBartForConditionalGeneration", "PegasusForConditionalGeneration", "LEDForConditionalGeneration",
    "MarianMTModel"})
# How many GPUs one process spreads the model over with `device_map` (an int; Unknown when the GPUs it sees are not
# known): ms-swift's placement when one process sees several GPUs.
DEVICE_MAP_GPUS = "device_map_gpus"
# Why the job trains in a way the memory model does not describe (a string): no memory rule judges it,
# and `trainlint estimate` states the reason.
OUT_OF_SCOPE = "memory_out_of_scope"
# The devices a job runs on when they are not GPUs (a string: "TPUs", "Ascend NPUs"): no GPU count or GPU memory
# describes it.
NON_GPU_DEVICES = "non_gpu_devices"


def is_on(setting: Optional[Setting]) -> bool:
    return setting is not None and coerce(K.GRADIENT_CHECKPOINTING, setting.value).value is True


def whole(setting: Optional[Setting]) -> Optional[int]:
    if setting is None:
        return None
    value = coerce_as(int, setting.value).value
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def add_switch(candidates: Candidates, knob: str, setting: Setting, note: str) -> None:
    candidates.add(knob, replace(setting, value=True, kind=SourceKind.DERIVED, origin=None, via=(setting,), note=note))


def add_degree(candidates: Candidates, knob: str, written: Mapping[str, Setting], keys: Iterable[str]) -> None:
    """The largest degree any of `keys` writes (they are aliases of one another across versions)."""
    found = [(whole(written.get(key)), written.get(key), key) for key in keys]
    found = [(degree, setting, key) for degree, setting, key in found if degree is not None and degree > 1]
    if not found:
        return
    degree, setting, key = max(found, key=lambda item: item[0])
    candidates.add(knob, Setting(degree, SourceKind.DERIVED, None, via=(setting,), note=key, written_as=key))


def add_count(candidates: Candidates, knob: str, count: int, setting: Setting, note: str) -> None:
    candidates.add(knob, replace(setting, value=count, kind=SourceKind.DERIVED, origin=None, via=(setting,), note=note))


def add_no_training_step(candidates: Candidates, setting: Setting, reason: str) -> None:
    """The launch takes no training step (it only predicts or evaluates): out of the memory model's scope, and no
    global batch to keep when its GPU count changes."""
    add_out_of_scope(candidates, setting, reason)
    candidates.add(NO_TRAINING_STEP, replace(setting, value=True, kind=SourceKind.DERIVED, origin=None, via=(setting,),
                                             note=reason))


def add_out_of_scope(candidates: Candidates, setting: Setting, reason: str) -> None:
    candidates.add(OUT_OF_SCOPE, replace(setting, value=reason, kind=SourceKind.DERIVED, origin=None, via=(setting,),
                                         note=reason))


def plugins(written: Mapping[str, Setting]) -> Iterable[Setting]:
    return (setting for key, setting in written.items()
            if (key == "plugins" or key.startswith("plugins.")) and isinstance(setting.value, str))
