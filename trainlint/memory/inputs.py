"""What the memory estimate reads about a job: the resolved settings (with any overrides in place)
turned into one typed, frozen `JobInputs`, and the notes saying what had to be assumed.

Every default taken when a setting cannot be read is listed in docs/memory-model.md §2.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Dict, List, Mapping, Optional, Set, Tuple

from trainlint.core import Setting, ShardingEngine, SourceKind, TrainingRun, Unknown, Value, parsed_release
from trainlint.knobs import K
from trainlint.memory.catalog import ModelSpec
from trainlint.memory.gpus import Gpu
from trainlint.readers.source import display_path
from trainlint.resolution.evaluation import evaluation_runs
from trainlint.resolution.frameworks.memory_features import (  # the knobs frameworks derive (docs/memory-model.md §17)
    ACTIVATION_OFFLOAD,
    CLASSIFIER,
    FUSED_LOSS,
    IN_PLACE_LOSS,
    MODEL_PARALLEL,
    OUT_OF_SCOPE,
    PAIRED_SEQUENCES,
    REFERENCE_MODEL,
    SEQUENCE_PARALLEL,
    TEXT_ONLY_BATCHES,
    TILED_MLP,
)
from trainlint.resolution.freezing import FROZEN_IN_CODE, TRAINS_AHEAD_OF_LLM
from trainlint.resolution.trains import PREFIX_TUNING

# docs/memory-model.md §2: the defaults assumed when a setting cannot be read.
DEFAULT_SEQ = 2048
DEFAULT_LORA_R = 64
# docs/memory-model.md §2: image tokens take part of the length limit; an unknown limit leaves this
# much room for text next to them.
TEXT_TOKENS_NEXT_TO_IMAGES = 512
DEFAULT_EVAL_BATCH = 8
# docs/memory-model.md §9: an AnyRes grid without a tile count is taken as 2 x 2.
DEFAULT_ANYRES_GRID = 4
# docs/memory-model.md §9: InternLM-XComposer-2.5 separates crop rows with this many tokens.
XCOMPOSER_ROW_SEPARATOR_TOKENS = 20

# Optimizer variants whose smaller states the model does not know: AdamW's are counted instead.
UNMODELLED_OPTIMIZER_KNOBS = (K.USE_GALORE, K.USE_APOLLO, K.USE_BADAM)



class Attention(str, Enum):
    """The attention kernel family, as far as memory is concerned (docs/memory-model.md §7)."""

    FLASH = "flash"  # FlashAttention-2, xformers: no s x s tensors
    SDPA = "sdpa"  # PyTorch SDPA: flash/memory-efficient kernels in 16-bit, the math kernel in fp32
    EAGER = "eager"  # explicit softmax(QK^T): the s x s scores of every head are kept


@dataclass
class EstimateNotes:
    """Assumptions stated with an estimate, the unknowns behind them and the inputs they touch
    (`assumed` topics: "batch", "sequence", "model", "world_size", ...)."""

    assumptions: List[str] = field(default_factory=list)
    unknowns: List[str] = field(default_factory=list)
    assumed: Set[str] = field(default_factory=set)

    def unknown(self, topic: str, text: str) -> None:
        self.unknowns.append(text)
        self.assumed.add(topic)

    def note(self, text: str) -> None:
        if text not in self.assumptions:
            self.assumptions.append(text)


class KnobReader:
    """Knob values with overrides applied; Unknown and absent read as None."""

    def __init__(self, run: TrainingRun, overrides: Optional[Mapping[str, Value]]):
        self._run = run
        self.overrides: Dict[str, Value] = dict(overrides or {})

    def _raw(self, knob: str) -> Value:
        return self.overrides[knob] if knob in self.overrides else self._run.value(knob)

    def get(self, knob: str) -> Value:
        value = self._raw(knob)
        return None if isinstance(value, Unknown) else value

    def is_unknown(self, knob: str) -> bool:
        return isinstance(self._raw(knob), Unknown)

    def int(self, knob: str) -> Optional[int]:
        value = self.get(knob)
        if isinstance(value, bool):
            return int(value)
        if isinstance(value, (int, float)) and math.isfinite(value):
            return int(value)
        if isinstance(value, str):
            try:
                return int(float(value))
            except ValueError:
                return None
        return None

    def bool(self, knob: str) -> Optional[bool]:
        value = self.get(knob)
        if isinstance(value, bool):
            return value
        if isinstance(value, (int, float)):
            return bool(value)
        if isinstance(value, str):
            lowered = value.strip().lower()
            if lowered in ("true", "1", "yes", "on"):
                return True
            if lowered in ("false", "0", "no", "off", "none", ""):
                return False
        return None

    def str(self, knob: str) -> Optional[str]:
        value = self.get(knob)
        return value.strip().lower() if isinstance(value, str) and value.strip() else None


def out_of_scope(run: TrainingRun) -> str:
    """Why the job trains in a way the memory model does not describe (set by a framework that knows), or ""."""
    reason = run.known(OUT_OF_SCOPE)
    return reason if isinstance(reason, str) else ""


def _offloaded(knobs: KnobReader, run: TrainingRun, knob: str, zero: Optional[int], notes: EstimateNotes) -> bool:
    """Whether DeepSpeed keeps these states on the CPU. Like every setting that lowers memory, one that cannot be
    read counts as on: the side that raises no false alarm."""
    if zero is not None and zero >= 1 and knobs.is_unknown(knob):
        what = "optimizer states" if knob == K.OFFLOAD_OPTIMIZER else "parameters"
        notes.unknown(knob, f"whether the {what} are offloaded is unknown{_why(run.setting(knob))}: assumed "
                            "offloaded")
        return True
    return offloaded(knobs.str(knob)) or _offload_switch(knobs, zero)


def _offload_switch(knobs: KnobReader, zero: Optional[int]) -> bool:
    """DeepSpeed-Chat's `--offload`: its config builder puts both optimizer and parameters on the CPU."""
    return zero is not None and bool(knobs.bool(K.OFFLOAD))


def _sharded_by_fsdp(run: TrainingRun) -> bool:
    setting = run.setting(K.ZERO_STAGE)
    return setting is not None and setting.engine in (ShardingEngine.FSDP, ShardingEngine.FSDP_NO_SHARD)


def _sequence_parallel(knobs: KnobReader, notes: EstimateNotes) -> int:
    degree = knobs.int(SEQUENCE_PARALLEL)
    if degree is None or degree <= 1:
        return 1
    notes.note(f"sequence parallelism over {degree} GPUs: each holds 1/{degree} of a sequence's activations")
    return degree


def _switch(knobs: KnobReader, knob: str, notes: EstimateNotes, note: str) -> bool:
    on = bool(knobs.bool(knob))
    if on:
        notes.note(note)
    return on


def offloaded(device: Optional[str]) -> bool:
    """A DeepSpeed offload device that moves states off the GPU ("cpu", "nvme")."""
    return device is not None and device not in ("none", "null", "", "false", "gpu", "cuda")


def with_overrides(run: TrainingRun, overrides: Mapping[str, Value]) -> TrainingRun:
    """The run with `overrides` in place of its settings (for the catalog lookups that read a run)."""
    if not overrides:
        return run
    settings = dict(run.settings)
    for knob, value in overrides.items():
        settings[knob] = Setting(value=value, kind=SourceKind.ASSUMED, note="override")
    return replace(run, settings=settings)


@dataclass(frozen=True)
class JobInputs:
    """Everything the memory terms read about one job, defaults already taken (docs/memory-model.md §2)."""

    per_device_batch: int
    # Samples the entry script packs into one item of the per-device batch.
    batch_multiplier: int
    sequence: int
    image_tokens: int  # LLM tokens per sample taken by images (docs/memory-model.md §9)
    images_per_sample: int  # image tiles per sample through the vision tower
    world_size: int
    mixed_precision: bool  # bf16 or fp16 compute
    weights_half: bool  # the weights themselves are held in 16-bit
    zero_stage: Optional[int]  # None: no DeepSpeed
    offload_optimizer: bool
    offload_params: bool
    lora: bool
    lora_rank: int
    quant_bits: int  # 4 or 8 for a quantized base, else 16
    trained_embedding_copies: int  # number of V x h matrices trained next to LoRA (modules_to_save)
    # Only a small adapter (the multimodal projector) trains; the LLM is frozen (LLaVA pre-training).
    frozen_base: bool
    checkpointing: bool
    attention: Attention
    optimizer: str
    # bitsandbytes' paged optimizers (`paged_adamw_32bit`, ...) keep their states in CUDA unified memory, which moves
    # them to CPU memory when the GPU runs short: they cannot exhaust the GPU (docs/memory-model.md §4).
    optimizer_pages_out: bool
    vision_trainable: bool
    vision_builtin: bool  # the tower is part of the model's own module tree
    eval_runs: bool
    eval_batch: int
    eval_gathers_logits: bool
    # docs/memory-model.md §17: features that change what a GPU holds.
    fsdp: bool = False  # the states are sharded by FSDP (zero_stage tells how far)
    sequence_parallel: int = 1  # each GPU holds 1/n of a sequence's tokens
    fused_loss: bool = False  # the loss never builds the full (tokens x vocab) logits
    classifier: bool = False  # a head over labels: no vocabulary logits in training or evaluation
    in_place_loss: bool = False  # the loss keeps only the 16-bit logits and overwrites them with their gradient
    activation_offload: bool = False
    tiled_mlp: bool = False
    reference_model: bool = False  # a frozen copy of the model's weights (DPO, KTO)
    # docs/memory-model.md §5: the 16-bit gradient buckets ZeRO-1/2 allocate in backward, in elements.
    gradient_bucket_elements: float = 0.0
    # docs/memory-model.md §8: sequences per sample in the batch (2: a preference pair's chosen and rejected answers).
    sequences_per_sample: int = 1
    # Where code freezes parameters, leaving the trainable set unknown (FILE:LINE): `frozen_base` is then set too,
    # the side that cannot raise a false alarm.
    frozen_in_code: str = ""
    # Layers ahead of the first trainable one keep no activations (nothing before them needs a gradient). Where code
    # freezes an unknown set of a text-only model, the first trainable layer may be the last: the activations of one
    # layer are counted, the same side. Not for P-Tuning v2, whose prefix enters every layer, nor for a multimodal
    # model or a freeze whose condition names a projector or a vision part, where what it leaves to train (Mantis's
    # projector) sits ahead of every layer of the LLM.
    activations_from_last_layer: bool = False
    # The module that wraps the model in LoRA adapters when turning HF gradient checkpointing on would make the first
    # backward fail (no input of a frozen layer requires grad: trainlint.resolution.adapter_inputs); "" when it would
    # not, or when that is not known. Plans and fixes then leave checkpointing as it is.
    checkpointing_breaks_adapters: str = ""
    # Checkpointing reaches the vision tower too: a built-in one, or (transformers >= 4.35) any the model holds.
    vision_checkpointed: bool = False

    @property
    def samples_per_device(self) -> int:
        """Samples in one micro-batch: the per-device batch times the data-level multiplier."""
        return self.per_device_batch * self.batch_multiplier

    @property
    def computes_in_half(self) -> bool:
        """Activations and attention inputs are 16-bit: under mixed precision, or with the weights themselves in
        16-bit (`torch_dtype=torch.bfloat16` without `--bf16`), whose layers compute in their dtype."""
        return self.mixed_precision or self.weights_half

    @property
    def quantized_base(self) -> bool:
        """The base is loaded in 4 or 8 bits (QLoRA): ZeRO-3 does not shard it on the stacks recipes pin, since
        quantized loading places the weights with a `device_map`, which transformers refuses under ZeRO-3."""
        return self.quant_bits in (4, 8)

    @property
    def sequences_per_item(self) -> int:
        """Sequences each item of the per-device batch puts through the model (samples x answers per sample)."""
        return self.batch_multiplier * self.sequences_per_sample


def read_job_inputs(knobs: KnobReader, run: TrainingRun, model: Optional[ModelSpec], vision: Optional[ModelSpec],
                    notes: EstimateNotes, gpu: Optional[Gpu] = None) -> JobInputs:
    """The job's inputs; each default taken is recorded in `notes` (the order of the notes is the
    order in which a reader meets the settings: batch, world, precision, sharding, method, model).
    `gpu`, when given, decides what the model's own attention default becomes on that card."""
    batch = _per_device_batch(knobs, notes)
    multiplier = _batch_multiplier(run, notes)
    sequences = _paired_sequences(knobs, notes)
    world = _world_size(knobs, notes)
    half = _mixed_precision(knobs, notes)
    zero = _zero_stage(knobs, run, notes)
    bits = _quantization_bits(knobs, run, notes)
    lora = _lora(knobs, run, bits, notes)
    lora_rank = _lora_rank(knobs, lora, notes)
    fsdp = zero is not None and _sharded_by_fsdp(run)
    # FSDP keeps the dtype the model was loaded in; DeepSpeed casts the module to 16-bit.
    weights_half = _weights_half(knobs, model, half, None if fsdp else zero, lora, notes, run.setting(K.TORCH_DTYPE))
    embedding_copies = _trained_embedding_copies(knobs, lora, notes)
    checkpointing = _checkpointing(knobs, notes)
    attention = _attention(knobs, run, model, notes, gpu)
    optimizer = _optimizer(knobs, notes)
    vision_trainable = _vision_trainable(knobs, vision, notes)
    image_tokens, images = image_tokens_per_sample(knobs, model, vision, notes)
    sequence = _sequence(knobs, image_tokens, notes)
    eval_runs, eval_batch, gathers = _evaluation(knobs, run, batch)
    frozen_base = _frozen_base(knobs, notes)
    builtin = bool(model is not None and model.vision and not knobs.str(K.VISION_TOWER))
    tower_checkpointed = checkpointing and (builtin or _submodules_checkpointed(run, vision_trainable, notes))
    # Every layer keeps its activations under a P-Tuning v2 prefix, in a multimodal model, and where the freeze keeps
    # a part ahead of the LLM training (JobInputs).
    every_layer = knobs.bool(PREFIX_TUNING) is True or vision is not None or builtin \
        or knobs.bool(TRAINS_AHEAD_OF_LLM) is True
    code_freeze = "" if lora or frozen_base else _frozen_in_code(knobs, run, notes, every_layer)
    return JobInputs(
        per_device_batch=batch, batch_multiplier=multiplier, sequences_per_sample=sequences, sequence=sequence,
        image_tokens=image_tokens,
        images_per_sample=images, world_size=world, mixed_precision=half, weights_half=weights_half,
        zero_stage=zero, offload_optimizer=_offloaded(knobs, run, K.OFFLOAD_OPTIMIZER, zero, notes),
        offload_params=_offloaded(knobs, run, K.OFFLOAD_PARAM, zero, notes), lora=lora,
        lora_rank=lora_rank,
        frozen_base=frozen_base or bool(code_freeze), frozen_in_code=code_freeze,
        activations_from_last_layer=bool(code_freeze) and not every_layer,
        quant_bits=bits if bits in (4, 8) else 16,
        trained_embedding_copies=embedding_copies, checkpointing=checkpointing, attention=attention,
        optimizer=optimizer, optimizer_pages_out=pages_out(optimizer), vision_trainable=vision_trainable,
        vision_builtin=builtin, vision_checkpointed=tower_checkpointed,
        eval_runs=eval_runs, eval_batch=eval_batch, eval_gathers_logits=gathers,
        fsdp=fsdp, sequence_parallel=_sequence_parallel(knobs, notes),
        fused_loss=_switch(knobs, CLASSIFIER, notes, "a classification head: logits over the labels, not the "
                                                     "vocabulary")
        or _switch(knobs, FUSED_LOSS, notes, "no full vocabulary logits tensor (a fused linear cross-entropy, or a "
                                             "reward model's value head)"),
        classifier=knobs.bool(CLASSIFIER) is True,
        in_place_loss=_switch(knobs, IN_PLACE_LOSS, notes,
                              "cross-entropy on the 16-bit logits, gradient written in place: no fp32 copy"),
        activation_offload=checkpointing and _switch(knobs, ACTIVATION_OFFLOAD, notes,
                                                     "activation offloading: checkpointed layer inputs on the CPU"),
        tiled_mlp=_switch(knobs, TILED_MLP, notes, "tiled MLP: MLP intermediates computed a tile at a time"),
        checkpointing_breaks_adapters=_checkpointing_breaks_adapters(knobs, run, lora),
        # With adapters the reference is the adapter-free base itself (TRL, LLaMA-Factory, axolotl).
        reference_model=not lora and _switch(knobs, REFERENCE_MODEL, notes,
                                             "a frozen reference copy of the model's weights (preference training)"),
        gradient_bucket_elements=_gradient_bucket_elements(knobs, model, None if fsdp else zero),
    )


# docs/memory-model.md §5: DeepSpeed's defaults (its configuration documentation, deepspeed/runtime/zero/config.py).
DEEPSPEED_REDUCE_BUCKET_DEFAULT = 5e8


def _gradient_bucket_elements(knobs: KnobReader, model: Optional[ModelSpec], zero: Optional[int]) -> float:
    """The elements of the gradient buckets ZeRO-1/2 allocate in backward (deepspeed/runtime/zero/
    stage_1_and_2.py): with `contiguous_gradients` (on by default) one bucket of `reduce_bucket_size`
    elements in the 16-bit dtype, a second with `overlap_comm` (off by default below stage 3). `"auto"` is
    filled by the HF integration with hidden x hidden. A value that cannot be read counts as that smaller
    "auto" size, the side that cannot raise a false alarm."""
    if zero not in (1, 2) or knobs.bool(K.CONTIGUOUS_GRADIENTS) is False:
        return 0.0
    hidden_squared = float(model.hidden * model.hidden) if model is not None else 0.0
    written = knobs.get(K.REDUCE_BUCKET_SIZE)
    if written is None and not knobs.is_unknown(K.REDUCE_BUCKET_SIZE):
        elements = DEEPSPEED_REDUCE_BUCKET_DEFAULT
    elif isinstance(written, (int, float)) and not isinstance(written, bool) and written > 0:
        elements = float(written)
    else:
        elements = hidden_squared  # "auto", or unreadable
    return elements * (2 if knobs.bool(K.OVERLAP_COMM) else 1)


def _count_or_one(knobs: KnobReader, knob: str, notes: EstimateNotes, topic: str, assumed: str) -> int:
    """A count the estimate needs (a batch, a world size), or 1 with the assumption said."""
    count = knobs.int(knob)
    if count is None or count < 1:
        notes.unknown(topic, assumed)
        return 1
    return count


def _per_device_batch(knobs: KnobReader, notes: EstimateNotes) -> int:
    return _count_or_one(knobs, K.PER_DEVICE_TRAIN_BATCH_SIZE, notes, "batch",
                         "per-device batch size unknown: assumed 1")


def _batch_multiplier(run: TrainingRun, notes: EstimateNotes) -> int:
    setting = run.facts.batch_multiplier
    if not isinstance(setting, Setting):
        return 1
    value = setting.value
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 1:
        multiplier = int(value)
        notes.note(f"the entry script packs {multiplier} samples per item (data-level batch multiplier)")
        return multiplier
    notes.unknown("batch", "data-level batch multiplier unknown: assumed 1")
    return 1


def _paired_sequences(knobs: KnobReader, notes: EstimateNotes) -> int:
    """docs/memory-model.md §8: preference training runs each pair's chosen and rejected answers in one batch."""
    count = knobs.int(PAIRED_SEQUENCES)
    if count is None or count <= 1:
        return 1
    notes.note(f"preference pairs: {count} sequences per sample (chosen and rejected) in every batch")
    return count


def _world_size(knobs: KnobReader, notes: EstimateNotes) -> int:
    return _count_or_one(knobs, K.WORLD_SIZE, notes, "world_size",
                         "world size unknown: assumed 1 GPU (no sharding across GPUs)")


def _mixed_precision(knobs: KnobReader, notes: EstimateNotes) -> bool:
    if knobs.bool(K.BF16) or knobs.bool(K.FP16) or knobs.bool(K.FP8):
        return True
    if knobs.str(K.BF16) == "auto" or knobs.str(K.FP16) == "auto":
        # axolotl's `bf16: auto` trains in bf16 where the GPU has it and in fp16 elsewhere: 16-bit either way.
        notes.note("bf16 auto: 16-bit mixed precision")
        return True
    if knobs.is_unknown(K.BF16) or knobs.is_unknown(K.FP16):
        # `--bf16 $USE_BF16`: a flag that may turn 16-bit training on; like checkpointing, a setting
        # that lowers memory is assumed on when it cannot be read.
        notes.unknown("precision", "mixed precision unknown: assumed bf16")
        return True
    return False


def _zero_stage(knobs: KnobReader, run: TrainingRun, notes: EstimateNotes) -> Optional[int]:
    """The ZeRO (or FSDP) stage, or None when no sharding engine wraps the model (plain DDP)."""
    zero = knobs.int(K.ZERO_STAGE)
    if zero is not None and not 0 <= zero <= 3:
        zero = None
    setting = run.setting(K.ZERO_STAGE)
    if zero == 0 and K.ZERO_STAGE not in knobs.overrides and setting is not None \
            and setting.engine in (ShardingEngine.NONE, ShardingEngine.FSDP_NO_SHARD):
        return None
    if zero is None and knobs.is_unknown(K.ZERO_STAGE):
        notes.unknown("zero_stage", f"ZeRO stage unknown{_why(setting)}: assumed no ZeRO (every GPU holds every model "
                                    "state)")
    return zero


def _why(setting: Optional[Setting]) -> str:
    """` (the reason)` a setting's value is unknown, for a note; "" when it gives none."""
    return f" ({setting.value.reason})" if setting is not None and isinstance(setting.value, Unknown) else ""


def _quantization_bits(knobs: KnobReader, run: TrainingRun, notes: EstimateNotes) -> int:
    bits = knobs.int(K.BITS)
    if bits is None and knobs.is_unknown(K.BITS):
        # Like every setting that lowers memory, a quantization switch that cannot be read counts as on: the fewest
        # bits an unreadable switch can give (an 8-bit one alone cannot give 4).
        assumed = 8 if knobs.is_unknown(K.LOAD_IN_8BIT) and not knobs.is_unknown(K.LOAD_IN_4BIT) else 4
        notes.unknown("bits", f"whether the base model is quantized is unknown{_why(run.setting(K.BITS))}: "
                              f"assumed {assumed}-bit")
        return assumed
    return bits or 16


def _lora(knobs: KnobReader, run: TrainingRun, bits: int, notes: EstimateNotes) -> bool:
    if knobs.bool(K.LORA):
        return True
    if bits in (4, 8):
        # A quantized base cannot train itself: adapters train over it, or, where the job certainly trains a
        # P-Tuning v2 prefix and no LoRA switch may be on, the prefix does (ChatGLM's `--quantization_bit 4`).
        return not (knobs.bool(PREFIX_TUNING) is True and not knobs.is_unknown(K.LORA))
    if knobs.is_unknown(K.LORA):
        # Like checkpointing: a setting that lowers memory is assumed on when it cannot be read.
        notes.unknown("lora_switch", f"whether LoRA adapters are used is unknown{_why(run.setting(K.LORA))}: "
                                     "assumed LoRA")
        return True
    return False


def _lora_rank(knobs: KnobReader, lora: bool, notes: EstimateNotes) -> int:
    rank = knobs.int(K.LORA_R) or 0
    if lora and rank <= 0:
        notes.unknown("lora", f"LoRA rank unknown: assumed r={DEFAULT_LORA_R}")
        return DEFAULT_LORA_R
    return rank


# The torch_dtype spellings that load 16-bit weights (`torch.` prefix removed).
HALF_DTYPE_NAMES = frozenset({"bfloat16", "float16", "bf16", "fp16", "half"})


def names_half_dtype(value: str) -> bool:
    return value.removeprefix("torch.") in HALF_DTYPE_NAMES


def _weights_half(knobs: KnobReader, model: Optional[ModelSpec], half: bool, zero: Optional[int],
                  lora: bool, notes: EstimateNotes, written: Optional[Setting] = None) -> bool:
    dtype = (knobs.str(K.TORCH_DTYPE) or "").removeprefix("torch.")
    if dtype in HALF_DTYPE_NAMES:
        return True
    if dtype in ("float32", "fp32"):
        return False
    if dtype == "auto":
        # transformers loads the dtype the checkpoint's config.json names (`torch_dtype`), which the catalog does not
        # record: 16-bit for the LLMs it holds, as published, but not for every checkpoint. The lower side.
        notes.unknown("torch_dtype", "torch_dtype=\"auto\" loads the dtype the checkpoint's config.json names: "
                                     "assumed 16-bit")
        return True
    if knobs.is_unknown(K.TORCH_DTYPE):
        # `torch_dtype=torch.bfloat16 if args.bf16 else torch.half`, or `model = model.half()` in one branch of
        # several: the weights are in some dtype the code computes, whatever the trainer's mixed precision.
        # Like every setting that lowers memory, unknown counts as the lower side: 16-bit weights, which
        # train without an fp32 copy unless DeepSpeed or LoRA keeps one.
        if written is not None and written.kind == SourceKind.FRAMEWORK_DEFAULT:
            # A framework's default that depends on the checkpoint (ms-swift loads the config.json's dtype).
            notes.unknown("torch_dtype",
                          f"the dtype the weights are loaded in is unknown{_why(written)}: assumed 16-bit")
        else:
            notes.unknown("torch_dtype", "the dtype the weights are loaded in is computed in code: assumed 16-bit")
        return True
    # DeepSpeed casts the module to 16-bit; LoRA scripts load the frozen base in the compute dtype.
    return half and (zero is not None or lora or (model is not None and model.half_by_default))


def _checkpointing_breaks_adapters(knobs: KnobReader, run: TrainingRun, lora: bool) -> str:
    """The adapter-wrapping module of a LoRA job that checkpointing would break; "" unless that is certain: LoRA
    on, no input embedding trained in full next to it (`modules_to_save` naming one gives the inputs a grad), and no
    `gradient_checkpointing_kwargs` given."""
    wrapper = run.facts.adapters_without_input_grads
    if not (wrapper and lora) or knobs.is_unknown(K.LORA) or knobs.is_unknown(K.LORA_MODULES_TO_SAVE):
        return ""
    if knobs.get(K.GRADIENT_CHECKPOINTING_KWARGS) is not None or knobs.is_unknown(K.GRADIENT_CHECKPOINTING_KWARGS):
        return ""  # the launch picks the checkpoint's kind itself (`{"use_reentrant": false}` needs no input grads)
    return "" if any("embed" in name or "wte" in name for name in _modules_to_save(knobs)) else wrapper


def _modules_to_save(knobs: KnobReader) -> List[str]:
    """The names `modules_to_save` lists: comma-separated (a flag, LLaMA-Factory's `additional_target`) or a YAML list
    (items joined by spaces)."""
    return (knobs.str(K.LORA_MODULES_TO_SAVE) or "").replace(",", " ").split()


def adapter_inputs_remedy(wrapper: str) -> str:
    """What a LoRA job must do in code before checkpointing can be turned on (wrapper: the module that wraps it)."""
    return (f"{display_path(wrapper)} makes the inputs require grad (`model.enable_input_require_grads()` after "
            f"`get_peft_model`): without it the first backward fails with checkpointing on")


def _trained_embedding_copies(knobs: KnobReader, lora: bool, notes: EstimateNotes) -> int:
    """Embedding and output layers that `modules_to_save` trains as full copies (docs/memory-model.md §6)."""
    if lora and knobs.is_unknown(K.LORA_MODULES_TO_SAVE):
        # Like every setting that adds memory: unknown counts as absent, the side that raises no false alarm.
        notes.note("modules trained in full next to LoRA (modules_to_save) unknown: assumed none")
        return 0
    names = _modules_to_save(knobs)
    if not (lora and names):
        return 0
    copies = [name for name in names if any(part in name for part in ("wte", "embed", "lm_head", "output"))]
    if copies:
        notes.note(f"modules_to_save trains {', '.join(copies)} in full next to LoRA (a vocabulary x hidden matrix "
                   f"each)")
    return len(copies)


def _checkpointing(knobs: KnobReader, notes: EstimateNotes) -> bool:
    checkpointing = knobs.bool(K.GRADIENT_CHECKPOINTING)
    if checkpointing is not None:
        return checkpointing
    if knobs.is_unknown(K.GRADIENT_CHECKPOINTING):
        notes.unknown("checkpointing", "gradient checkpointing unknown: assumed on")
        return True
    return False


# transformers selects SDPA by default from this release on; before it, models ran eager attention.
SDPA_DEFAULT_SINCE = "4.36"


def _eager_by_version(run: TrainingRun) -> Optional[str]:
    """Why the installed transformers predates the SDPA default, when its requirements prove it; else None."""
    old_release = _predates(run, SDPA_DEFAULT_SINCE)
    return f"the default of {old_release}" if old_release is not None else None


def _predates(run: TrainingRun, release: str) -> Optional[str]:
    """The installed transformers, when its requirements prove it older than `release`: an exact pin below it, or
    (without a pin) a requirement whose upper bound is below it; else None."""
    pin = run.facts.transformers_pin
    if pin is not None and isinstance(pin.value, str):
        installed = parsed_release(pin.value)
        if installed is None:
            return None
        return f"the pinned transformers {pin.value}" if installed < parsed_release(release) else None
    ceiling = run.facts.transformers_ceiling
    if ceiling is not None and ceiling.below(release):
        where = f" ({ceiling.setting.origin})" if ceiling.setting.origin is not None else ""
        return f"every release `{ceiling.setting.text}`{where} admits"
    return None


# From this release on, `gradient_checkpointing_enable` turns checkpointing on in every submodule that has a
# `gradient_checkpointing` attribute (transformers PR #27073, modeling_utils `_set_gradient_checkpointing`), a vision
# tower the LLaVA-style code attaches beside the LLM included; before it, each model class set it on its own classes.
SUBMODULE_CHECKPOINTING_SINCE = "4.35"


def _submodules_checkpointed(run: TrainingRun, vision_trainable: bool, notes: EstimateNotes) -> bool:
    """Whether checkpointing the model reaches a tower attached beside its LLM: not when the requirements prove a
    transformers older than 4.35; unpinned, it may (the lower side, which cannot raise a false alarm)."""
    old_release = _predates(run, SUBMODULE_CHECKPOINTING_SINCE)
    if old_release is None:
        return True
    if vision_trainable:
        notes.note(f"the trained vision tower is not checkpointed with the LLM: {old_release} sets checkpointing on "
                   f"the model's own classes only (every submodule from {SUBMODULE_CHECKPOINTING_SINCE})")
    return False


def _attention(knobs: KnobReader, run: TrainingRun, model: Optional[ModelSpec], notes: EstimateNotes,
               gpu: Optional[Gpu] = None) -> Attention:
    name = knobs.str(K.ATTN_IMPLEMENTATION) or ""
    if knobs.is_unknown(K.ATTN_IMPLEMENTATION):
        # `attn_implementation=attn_implementation` handed in by a caller trainlint does not follow: a kernel is
        # chosen, which one cannot be read. Like every setting that lowers memory, unknown counts as the lower
        # side: one that keeps no s x s scores.
        notes.unknown("attn_implementation", "the attention implementation is chosen in code: assumed a kernel "
                                             "that keeps no s x s scores")
        return Attention.FLASH
    old_release = None if name else _eager_by_version(run)
    if old_release is not None:
        name = "eager"
        notes.note(f"attention implementation not set: eager, {old_release} (SDPA became the default in "
                   f"{SDPA_DEFAULT_SINCE})")
    elif not name:
        # An unpinned version may be either side of 4.36: the lower-memory default cannot raise a false alarm.
        name = model.default_attn if model else "sdpa"
        if "flash" in name and gpu is not None and not gpu.runs_flash_attention:
            # docs/memory-model.md §7: the models whose own code turns FlashAttention-2 on fall back to
            # their eager attention where it cannot run (InternVL's modeling_internvl_chat.py, Qwen's
            # modeling_qwen.py).
            name = "eager"
            notes.note(f"attention implementation not set: eager, the model's fallback where FlashAttention-2 "
                       f"cannot run ({gpu.name} predates Ampere)")
        else:
            notes.note(f"attention implementation not set: assumed {name} (the model's default)")
    patch = run.setting(K.ATTENTION_PATCH)
    if name == "eager" and patch is not None and _patched(knobs, model):
        notes.note(f"`{patch.text}` in the entry script replaces the eager attention with a kernel that keeps no "
                   "s x s scores")
        return Attention.FLASH
    # PyTorch's FlexAttention (`flex_attention`) computes blocks of scores and never holds the s x s matrix, forward
    # or backward, as FlashAttention does.
    if "flash" in name or "flex" in name or name in ("fa2", "xformers"):
        return Attention.FLASH
    return Attention.SDPA if name == "sdpa" else Attention.EAGER


def _patched(knobs: KnobReader, model: Optional[ModelSpec]) -> bool:
    """Whether a patch in the entry script replaces the eager attention the job runs:
    `replace_llama_attn_with_flash_attn()` patches the forward of LLaMA's eager attention class, which the SDPA and
    FlashAttention-2 classes do not use. It does for that family, and may for a model of unknown family, which
    counts as patched (the lower side)."""
    family = knobs.str(K.ATTENTION_PATCH)
    return family is not None and (model is None or model.arch == family)


def _optimizer(knobs: KnobReader, notes: EstimateNotes) -> str:
    for knob_name in UNMODELLED_OPTIMIZER_KNOBS:
        if knobs.bool(knob_name):
            notes.note(f"{knob_name}: its smaller optimizer states are not modelled "
                       f"(AdamW's are counted, an upper bound)")
    if knobs.str(K.FINETUNING_TYPE) == "freeze":
        notes.note("freeze tuning: all parameters counted as trainable (an upper bound)")
    out_of_scope = knobs.get(OUT_OF_SCOPE)
    if isinstance(out_of_scope, str) and out_of_scope:
        notes.note(f"{out_of_scope}: out of the memory model's scope, so the figures are an upper bound and no "
                   f"memory rule judges this job")
    degree = knobs.int(MODEL_PARALLEL)
    if knobs.is_unknown(MODEL_PARALLEL):
        notes.note("tensor/pipeline parallelism of a degree not known is not modelled: every GPU is counted with "
                   "the whole model's states (an upper bound; no memory rule judges this job)")
    elif degree is not None and degree > 1:
        notes.note(f"tensor/pipeline parallelism over {degree} GPUs is not modelled: every GPU is counted with "
                   f"the whole model's states (an upper bound; no memory rule judges this job)")
    optimizer = knobs.str(K.OPTIM) or "adamw_torch"
    if pages_out(optimizer):
        notes.note(f"{optimizer}: a paged optimizer's states move to CPU memory when the GPU runs short, so they are "
                   "not counted on the GPU")
    return optimizer


def pages_out(optimizer: str) -> bool:
    """A bitsandbytes paged optimizer (`paged_adamw_32bit`, `paged_adamw_8bit`, `paged_lion_8bit`, ...)."""
    return "paged" in optimizer


def _vision_trainable(knobs: KnobReader, vision: Optional[ModelSpec], notes: EstimateNotes) -> bool:
    if vision is None:
        return False
    parts = _tunable_parts(knobs)
    if parts is not None:
        return "mm_vision_tower" in parts
    tune = knobs.bool(K.TUNE_VISION)
    if tune is not None:
        return tune
    freeze = knobs.bool(K.FREEZE_VISION_TOWER)
    if freeze is not None:
        return not freeze
    notes.note("vision tower assumed frozen (no tune_vision / freeze_vision_tower setting)")
    return False


def image_tokens_per_sample(knobs: KnobReader, model: Optional[ModelSpec], vision: Optional[ModelSpec],
                            notes: EstimateNotes) -> Tuple[int, int]:
    """(LLM tokens per sample taken by images, image tiles through the tower): docs/memory-model.md §9."""
    if vision is None:
        return 0, 0
    if knobs.bool(TEXT_ONLY_BATCHES):
        notes.note("text-only batches: no image reaches the vision tower (the framework builds no multimodal "
                   "collator)")
        return 0, 0
    # The VLM's own image tokens and slicing describe its own tower: a launch that names another (VILA's SigLIP
    # behind a checkpoint named after Qwen2-VL) gets that tower's.
    own = model if model is not None and model.vision and model.vision == vision.key else None
    per_tile = (own.image_tokens if own and own.image_tokens else 0) or vision.image_tokens
    tiles_knob = knobs.int(K.IMAGE_TILES)
    aspect = knobs.str(K.IMAGE_ASPECT_RATIO) or ""
    default_tiles = own.default_tiles if own else 1
    tiles = tiles_knob if tiles_knob and tiles_knob > 0 else default_tiles
    if "anyres" in aspect:
        grid = tiles_knob if tiles_knob and tiles_knob > 1 else DEFAULT_ANYRES_GRID
        side = max(1, int(math.isqrt(grid)))
        tokens = per_tile * (1 + grid) + side * int(math.isqrt(per_tile))
        notes.note(f"AnyRes: base view plus up to {grid} tiles of {per_tile} tokens and row newlines")
        return tokens, 1 + grid
    if model is not None and model.key.startswith("internlm-xcomposer2d5"):
        side = max(1, int(math.isqrt(tiles)))
        return (tiles + 1) * per_tile + 1 + (side + 1) * XCOMPOSER_ROW_SEPARATOR_TOKENS, tiles + 1
    if tiles > 1 or (own is not None and own.default_tiles > 1):
        if not tiles_knob:
            notes.note(f"image slicing not set: assumed the model's default of {tiles} slices")
        return per_tile * (tiles + 1), tiles + 1
    return per_tile, 1


def _sequence(knobs: KnobReader, image_tokens: int, notes: EstimateNotes) -> int:
    sequence = knobs.int(K.MAX_SEQ_LENGTH)
    if sequence is None or sequence < 1:
        sequence = max(DEFAULT_SEQ, image_tokens + TEXT_TOKENS_NEXT_TO_IMAGES) if image_tokens else DEFAULT_SEQ
        notes.unknown("sequence", f"sequence length unknown: assumed {sequence}")
    elif image_tokens:
        notes.note(f"the length limit {sequence} bounds text plus image tokens ({image_tokens} per sample)")
    return sequence


def _evaluation(knobs: KnobReader, run: TrainingRun, batch: int) -> Tuple[bool, int, bool]:
    """(evaluation runs, its per-device batch, its logits are gathered on the GPU for metrics)."""
    # The strategy as overridden (an estimate of the training step alone sets it to "no").
    if knobs.str(K.EVAL_STRATEGY) in (None, "no") or evaluation_runs(run).runs is not True:
        return False, 0, False
    eval_batch = batch if run.facts.eval_uses_train_batch else (knobs.int(K.PER_DEVICE_EVAL_BATCH_SIZE)
                                                                or DEFAULT_EVAL_BATCH)
    # A classifier's predictions are a few scores per sequence: nothing of size to gather.
    gathers = bool(run.facts.compute_metrics) and not knobs.int(K.EVAL_ACCUMULATION_STEPS) \
        and knobs.get(CLASSIFIER) is not True and not run.facts.own_trainer
    return True, eval_batch, gathers


def _tunable_parts(knobs: KnobReader) -> Optional[Tuple[str, ...]]:
    """LLaVA-NeXT's `mm_tunable_parts` (`mm_vision_tower,mm_mlp_adapter,mm_language_model`), when written: the
    parts that train, everything else frozen. None when it is not given or not known."""
    written = knobs.str(K.MM_TUNABLE_PARTS)
    if not written or not written.strip():
        return None
    return tuple(part.strip() for part in written.split(",") if part.strip())


def _frozen_base(knobs: KnobReader, notes: EstimateNotes) -> bool:
    """Whether only the projector trains. Unknown counts as frozen: like checkpointing, a setting
    that lowers memory is assumed on when it cannot be read, so no risk rests on the guess."""
    parts = _tunable_parts(knobs)
    if parts is not None:
        return "mm_language_model" not in parts
    # The LLM's own switch, where the script has one, says what LLaVA's `freeze_backbone` says elsewhere.
    llm_switch = K.FREEZE_LLM if knobs.get(K.FREEZE_LLM) is not None or knobs.is_unknown(K.FREEZE_LLM) \
        else K.FREEZE_BACKBONE
    if knobs.bool(K.TUNE_MM_MLP_ADAPTER) or knobs.bool(llm_switch):
        return True
    if knobs.is_unknown(K.TUNE_MM_MLP_ADAPTER) or knobs.is_unknown(llm_switch):
        notes.unknown("frozen_base", f"whether the LLM is frozen (tune_mm_mlp_adapter, {llm_switch}) is unknown: "
                                     "assumed frozen")
        return True
    return False


def _frozen_in_code(knobs: KnobReader, run: TrainingRun, notes: EstimateNotes, every_layer: bool) -> str:
    """Where code freezes parameters (or may) without a knob saying which train: FILE:LINE, else "". The LLM then
    counts as frozen for gradients and optimizer states, as for an unknown tune_mm_mlp_adapter, and, unless what
    trains sits ahead of every layer (`every_layer`: a P-Tuning v2 prefix, a multimodal model's projector or tower),
    as keeping the activations of its last layer alone: the side that cannot raise a false alarm."""
    if not (knobs.bool(FROZEN_IN_CODE) or knobs.is_unknown(FROZEN_IN_CODE)):
        return ""
    setting = run.setting(FROZEN_IN_CODE)
    origin = setting.origin if setting is not None else None
    where = f"{origin.path}:{origin.line}" if origin is not None else "an unknown place"
    maybe = ""
    if setting is not None and isinstance(setting.value, Unknown):
        maybe = f" when {setting.value.reason}"
    alone = "" if every_layer else ", with the activations of the last layer alone"
    if setting is not None and setting.via and setting.note:
        # Derived from a setting (P-Tuning v2's prefix length, axolotl's unfrozen_parameters), whose note says why.
        notes.unknown("frozen_base", f"{setting.note} ({where}): trainable set unknown, assumed frozen{alone}")
    else:
        notes.unknown("frozen_base", f"parameters frozen in code at {where}{maybe}: trainable set unknown, "
                                     f"assumed frozen{alone}")
    return where
