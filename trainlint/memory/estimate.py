"""Per-GPU peak memory of a training run: model states by ZeRO stage, activations from the
architecture, the logits/loss term, the vision tower, the eval pass and allocator overhead.

Formulas and their sources: /shared/MEMORY_FORMULAS.md (A1 DeepSpeed, A4 EleutherAI, A5 Korthikanti,
A6 LoRA/QLoRA, A7 image tokens). Constants that come from measurement rather than a formula are named
below and were checked against data/memory_calibration.csv with one general model (no per-row cases).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Dict, FrozenSet, List, Mapping, Optional, Set, Tuple

from trainlint.core import MemoryEstimate, Setting, SourceKind, TrainingRun, Unknown, Value
from trainlint.memory.catalog import ModelSpec, resolve_model, resolve_vision
from trainlint.memory.gpus import Gpu
from trainlint.resolution.evaluation import evaluation_runs

GIB = float(1 << 30)

# --- Constants (bytes unless noted) -----------------------------------------------------------
# Loss path per token per vocab entry at its peak: 16-bit logits, an fp32 copy for the loss, the
# fp32 log-softmax saved for backward and its gradient (three fp32-sized buffers + the half copy)
# when the model upcasts logits or runs under autocast; half of that when everything stays 16-bit.
LOGITS_BYTES_FP32_PATH = 12.0
LOGITS_BYTES_HALF_PATH = 6.0
# Eager attention keeps the fp32 softmax output and the 16-bit probabilities per score (A5 adapted);
# during that layer's backward about as much again is live as gradients of the scores.
EAGER_SCORE_BYTES_SAVED = 6.0
EAGER_SCORE_BYTES_BACKWARD = 8.0
# HF eager RMSNorm/LayerNorm upcasts to fp32, so autograd keeps fp32 copies (A5 "implementation
# surcharges"): about 8 bytes per hidden element per norm, two norms per layer.
NORM_UPCAST_BYTES = 16.0
# A layer's backward holds gradients of its activations next to the activations themselves.
LAYER_BACKWARD_FACTOR = 1.0
# CUDA context beyond what the usable capacity already excludes, cuBLAS workspaces, NCCL buffers.
FIXED_OVERHEAD_GIB = 1.0
NCCL_OVERHEAD_GIB = 0.5
# Caching-allocator fragmentation as a share of the dynamic (activation) memory and of model states.
FRAGMENTATION_DYNAMIC = 0.10
FRAGMENTATION_STATES = 0.05
# Quantized linear weights: NF4 with double quantization is 4.127 bits (A6), GPTQ 4-bit group 128 ~4.25.
QUANT_BYTES = {4: 0.53, 8: 1.06}

DEFAULT_SEQ = 2048
DEFAULT_LORA_R = 64
ASSUMED_EVAL_BATCHES = 10


@dataclass(frozen=True)
class JobMemoryEstimate(MemoryEstimate):
    """A MemoryEstimate plus what it rests on. `assumed_inputs` names the inputs that were guessed
    ("batch", "sequence", "model", "world_size", ...); rules should stay quiet when a risk depends on them."""

    assumed_inputs: FrozenSet[str] = frozenset()
    model: str = ""
    sequence_tokens: int = 0
    image_tokens: int = 0
    micro_batch: int = 0

    @property
    def rests_on_assumptions(self) -> bool:
        return bool(self.assumed_inputs & {"batch", "sequence", "model"})


@dataclass(frozen=True)
class Suggestion:
    """A change that would make the run fit (or fit better), with its new estimate."""

    description: str
    overrides: Mapping[str, Value]
    estimate: MemoryEstimate
    # Training math unchanged (same effective batch, same model updates) or not.
    preserves_training: bool = True


# --- Inputs -------------------------------------------------------------------------------------


@dataclass
class _Notes:
    assumptions: List[str] = field(default_factory=list)
    unknowns: List[str] = field(default_factory=list)
    assumed: Set[str] = field(default_factory=set)

    def unknown(self, topic: str, text: str) -> None:
        self.unknowns.append(text)
        self.assumed.add(topic)

    def note(self, text: str) -> None:
        if text not in self.assumptions:
            self.assumptions.append(text)


class _Knobs:
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


def _offloaded(device: Optional[str]) -> bool:
    return device is not None and device not in ("none", "null", "", "false", "gpu", "cuda")


@dataclass(frozen=True)
class _Job:
    batch: int
    multiplier: int
    seq: int
    image_tokens: int
    images_per_sample: int
    world: int
    half: bool
    weights_half: bool
    zero: Optional[int]
    offload_opt: bool
    offload_param: bool
    lora: bool
    lora_r: int
    bits: int
    extra_trainable_embeddings: int  # number of V x h matrices trained next to LoRA
    # Only a small adapter (the multimodal projector) trains; the LLM is frozen (LLaVA pre-training).
    frozen_base: bool
    ckpt: bool
    attn: str
    optim: str
    vision_trainable: bool
    vision_builtin: bool
    eval_runs: bool
    eval_batch: int
    eval_gathers: bool


def _job(k: _Knobs, run: TrainingRun, model: Optional[ModelSpec], vision: Optional[ModelSpec],
         notes: _Notes) -> _Job:
    batch = k.int("per_device_train_batch_size")
    if batch is None or batch < 1:
        batch = 1
        notes.unknown("batch", "per-device batch size unknown: assumed 1")
    multiplier = 1
    setting = run.facts.batch_multiplier
    if isinstance(setting, Setting):
        if isinstance(setting.value, (int, float)) and not isinstance(setting.value, bool) and setting.value >= 1:
            multiplier = int(setting.value)
            notes.note(f"the entry script packs {multiplier} samples per item (data-level batch multiplier)")
        else:
            notes.unknown("batch", "data-level batch multiplier unknown: assumed 1")
    world = k.int("world_size")
    if world is None or world < 1:
        world = 1
        notes.unknown("world_size", "world size unknown: assumed 1 GPU (no sharding across GPUs)")

    bf16, fp16 = k.bool("bf16"), k.bool("fp16")
    dtype = k.str("torch_dtype") or ""
    half = bool(bf16 or fp16)
    if not half and (k.is_unknown("bf16") or k.is_unknown("fp16")):
        # `--bf16 $USE_BF16`: a flag that may turn 16-bit training on; like checkpointing, a setting
        # that lowers memory is assumed on when it cannot be read.
        notes.unknown("precision", "mixed precision unknown: assumed bf16")
        half = True
    zero = k.int("zero_stage")
    if zero is not None and not 0 <= zero <= 3:
        zero = None
    if zero is None and k.is_unknown("zero_stage"):
        notes.unknown("zero_stage", "ZeRO stage unknown: assumed no ZeRO (every GPU holds every model state)")
    bits = k.int("bits") or 16
    lora = bool(k.bool("lora")) or bits in (4, 8)
    if not lora and k.is_unknown("lora"):
        # Like checkpointing: a setting that lowers memory is assumed on when it cannot be read.
        lora = True
        notes.unknown("lora_switch", "whether LoRA adapters are used is unknown: assumed LoRA")
    lora_r = k.int("lora_r") or 0
    if lora and lora_r <= 0:
        lora_r = DEFAULT_LORA_R
        notes.unknown("lora", f"LoRA rank unknown: assumed r={DEFAULT_LORA_R}")
    if dtype in ("bfloat16", "float16", "bf16", "fp16", "half"):
        weights_half = True
    elif dtype in ("float32", "fp32"):
        weights_half = False
    else:
        # DeepSpeed casts the module to 16-bit; LoRA scripts load the frozen base in the compute dtype.
        weights_half = half and (zero is not None or lora or (model is not None and model.half_by_default))
    saved = (k.str("lora_modules_to_save") or "").replace(" ", "")
    extra = 0
    if lora and saved:
        names = [n for n in saved.split(",") if n]
        extra = sum(1 for n in names if any(t in n for t in ("wte", "embed", "lm_head", "output")))
    ckpt = k.bool("gradient_checkpointing")
    if ckpt is None:
        ckpt = False
        if k.is_unknown("gradient_checkpointing"):
            ckpt = True
            notes.unknown("checkpointing", "gradient checkpointing unknown: assumed on")
    attn = k.str("attn_implementation") or ""
    if not attn:
        attn = (model.default_attn if model else "sdpa")
        notes.note(f"attention implementation not set: assumed {attn} (the model's default)")
    if "flash" in attn or attn in ("fa2", "xformers"):
        attn = "flash"
    elif attn != "sdpa":
        attn = "eager"
    optim = k.str("optim") or "adamw_torch"
    for knob_name in ("use_galore", "use_apollo", "use_badam"):
        if k.bool(knob_name):
            notes.note(f"{knob_name}: its smaller optimizer states are not modelled "
                       f"(AdamW's are counted, an upper bound)")
    if k.str("finetuning_type") == "freeze":
        notes.note("freeze tuning: all parameters counted as trainable (an upper bound)")

    vision_trainable = False
    if vision is not None:
        tune = k.bool("tune_vision")
        freeze = k.bool("freeze_vision_tower")
        if tune is not None:
            vision_trainable = tune
        elif freeze is not None:
            vision_trainable = not freeze
        else:
            notes.note("vision tower assumed frozen (no tune_vision / freeze_vision_tower setting)")

    image_tokens, images = _image_tokens(k, model, vision, notes)
    seq = k.int("max_seq_length")
    if seq is None or seq < 1:
        seq = max(DEFAULT_SEQ, image_tokens + 512) if image_tokens else DEFAULT_SEQ
        notes.unknown("sequence", f"sequence length unknown: assumed {seq}")
    elif image_tokens:
        notes.note(f"the length limit {seq} bounds text plus image tokens ({image_tokens} per sample)")

    eval_runs, eval_batch, gathers = _eval(k, run, batch)
    return _Job(
        batch=batch, multiplier=multiplier, seq=seq, image_tokens=image_tokens, images_per_sample=images,
        world=world, half=half, weights_half=weights_half, zero=zero,
        offload_opt=_offloaded(k.str("offload_optimizer")), offload_param=_offloaded(k.str("offload_param")),
        lora=lora, lora_r=lora_r, frozen_base=_frozen_base(k, notes), bits=bits if bits in (4, 8) else 16,
        extra_trainable_embeddings=extra, ckpt=ckpt, attn=attn, optim=optim, vision_trainable=vision_trainable,
        vision_builtin=bool(model is not None and model.vision and not k.str("vision_tower")), eval_runs=eval_runs,
        eval_batch=eval_batch, eval_gathers=gathers,
    )


def _image_tokens(k: _Knobs, model: Optional[ModelSpec], vision: Optional[ModelSpec],
                  notes: _Notes) -> Tuple[int, int]:
    """LLM tokens per sample taken by images and the number of tiles through the tower (A7)."""
    if vision is None:
        return 0, 0
    per_tile = (model.image_tokens if model and model.image_tokens else 0) or vision.image_tokens
    tiles_knob = k.int("image_tiles")
    aspect = k.str("image_aspect_ratio") or ""
    default_tiles = model.default_tiles if model and model.vision else 1
    tiles = tiles_knob if tiles_knob and tiles_knob > 0 else default_tiles
    if "anyres" in aspect:
        grid = tiles_knob if tiles_knob and tiles_knob > 1 else 4
        side = max(1, int(math.isqrt(grid)))
        tokens = per_tile * (1 + grid) + side * int(math.isqrt(per_tile))
        notes.note(f"AnyRes: base view plus up to {grid} tiles of {per_tile} tokens and row newlines")
        return tokens, 1 + grid
    if model is not None and model.key.startswith("internlm-xcomposer2d5"):
        side = max(1, int(math.isqrt(tiles)))
        return (tiles + 1) * per_tile + 1 + (side + 1) * 20, tiles + 1
    if tiles > 1 or (model is not None and model.default_tiles > 1):
        if not tiles_knob:
            notes.note(f"image slicing not set: assumed the model's default of {tiles} slices")
        return per_tile * (tiles + 1), tiles + 1
    return per_tile, 1


def _eval(k: _Knobs, run: TrainingRun, batch: int) -> Tuple[bool, int, bool]:
    """(evaluation runs, its per-device batch, its logits are gathered on the GPU for metrics)."""
    # The strategy as overridden (an estimate of the training step alone sets it to "no").
    if k.str("eval_strategy") in (None, "no") or evaluation_runs(run).runs is not True:
        return False, 0, False
    eval_batch = batch if run.facts.eval_uses_train_batch else (k.int("per_device_eval_batch_size") or 8)
    gathers = bool(run.facts.compute_metrics) and not k.int("eval_accumulation_steps")
    return True, eval_batch, gathers


# --- Terms ---------------------------------------------------------------------------------------


def zero2_model_states_bytes(total_params: float, num_gpus: int, cpu_offload: bool = False) -> float:
    """DeepSpeed `estimate_zero2_model_states_mem_needs` GPU bytes (current form, PR #5099; A1)."""
    if cpu_offload:
        return 2 * total_params
    return 2 * total_params + int(18 * total_params / num_gpus)


def zero3_model_states_bytes(total_params: float, largest_layer_params: float, num_gpus: int,
                             cpu_offload: bool = False, cpu_offload_params: bool = False) -> float:
    """DeepSpeed `estimate_zero3_model_states_mem_needs` GPU bytes (A1)."""
    largest_layer_memory = 4 * largest_layer_params
    if cpu_offload and cpu_offload_params:
        return largest_layer_memory
    if cpu_offload:
        return largest_layer_memory + int(2 * total_params / num_gpus)
    return largest_layer_memory + int(18 * total_params / num_gpus)


def korthikanti_activation_bytes(seq: int, batch: int, hidden: int, heads: int, layers: int,
                                 recompute: str = "none") -> float:
    """Korthikanti et al. Table 2 without parallelism: sbh(34 + 5as/h) per layer; full recompute 2sbh."""
    sbh = seq * batch * hidden
    if recompute == "full":
        return 2.0 * sbh * layers
    if recompute == "selective":
        return 34.0 * sbh * layers
    return sbh * (34.0 + 5.0 * heads * seq / hidden) * layers


def lora_adapter_params(model: ModelSpec, r: int) -> float:
    """r·(d_in + d_out) for every linear of every layer (A6): q, k, v, o and the MLP matrices."""
    h, q, kv, inter = model.hidden, model.q_dim, model.kv_dim, model.intermediate
    attn = (h + q) + 2 * (h + kv) + (q + h)
    mlp = 2 * (h + inter) + (inter + h) if model.mlp == "swiglu" else 2 * (h + inter)
    return float(r * (attn + mlp) * model.layers)


def _optimizer_state_bytes(optim: str, state_dtype_bytes: float) -> float:
    if "8bit" in optim or "bnb" in optim:
        return 2.0
    if "adafactor" in optim:
        return 0.5
    if "sgd" in optim:
        return 0.0
    if "lion" in optim:
        return state_dtype_bytes
    return 2.0 * state_dtype_bytes


@dataclass(frozen=True)
class _States:
    weights: float
    gradients: float
    optimizer: float


def _frozen_base(k: _Knobs, notes: _Notes) -> bool:
    """Whether only the projector trains. Unknown counts as frozen: like checkpointing, a setting
    that lowers memory is assumed on when it cannot be read, so no risk rests on the guess."""
    if k.bool("tune_mm_mlp_adapter") or k.bool("freeze_backbone"):
        return True
    if k.is_unknown("tune_mm_mlp_adapter") or k.is_unknown("freeze_backbone"):
        notes.unknown("frozen_base", "whether the LLM is frozen (tune_mm_mlp_adapter) is unknown: assumed frozen")
        return True
    return False


# A two-layer MLP projector (1024 -> 4096 -> 4096, LLaVA-1.5 mlp2x_gelu) is about 21M parameters.
PROJECTOR_PARAMS = 21e6


def _model_states(model: ModelSpec, vision: Optional[ModelSpec], job: _Job, notes: _Notes) -> _States:
    n = job.world
    tower = vision.params if vision is not None else 0.0
    llm = model.params
    if job.lora:
        trainable = lora_adapter_params(model, job.lora_r)
        extra = job.extra_trainable_embeddings * model.vocab * model.hidden
        frozen_llm = llm
        notes.note(f"LoRA r={job.lora_r} on every linear layer: {trainable / 1e6:.0f}M trainable adapter parameters")
        if extra:
            notes.note(f"embedding/output layers trained as full copies: {extra / 1e9:.2f}B extra parameters")
    elif job.frozen_base:
        trainable, extra, frozen_llm = PROJECTOR_PARAMS, 0.0, llm
        notes.note("only the multimodal projector trains: the LLM is frozen (tune_mm_mlp_adapter / freeze_backbone)")
    else:
        trainable, extra, frozen_llm = llm, 0.0, 0.0
    if vision is not None:
        if job.vision_trainable:
            trainable += tower
        else:
            frozen_llm += tower  # frozen tower weights sit with the frozen base

    # Frozen weights: 16-bit (or quantized linear layers with 16-bit embeddings).
    if job.bits in QUANT_BYTES and job.lora:
        emb = model.embedding_params
        frozen_bytes = (llm - emb) * QUANT_BYTES[job.bits] + emb * 2 + (frozen_llm - llm) * 2
        notes.note(f"{job.bits}-bit base: linear weights at {QUANT_BYTES[job.bits]} B/param, embeddings 16-bit")
    else:
        frozen_bytes = frozen_llm * (2 if job.weights_half or job.zero is not None else 4)

    if job.zero is not None:
        return _deepspeed_states(model, trainable + extra, frozen_bytes, job, n, notes)

    # Plain PyTorch/HF Trainer (DDP): nothing is sharded.
    weights, grads, opt = frozen_bytes, 0.0, 0.0
    if job.lora:
        # PEFT keeps adapters in fp32; torch AdamW keeps states in the parameter dtype.
        weights += trainable * 4
        grads += trainable * 4
        opt += trainable * (_optimizer_state_bytes(job.optim, 4) + 4)
        copy_bytes = 2 if job.weights_half else 4
        weights += extra * copy_bytes
        grads += extra * copy_bytes
        opt += extra * (_optimizer_state_bytes(job.optim, copy_bytes) + copy_bytes)
    elif job.weights_half:
        weights += trainable * 2
        grads += trainable * 2
        opt += trainable * (_optimizer_state_bytes(job.optim, 2) + 2)
        notes.note("weights loaded in 16-bit: gradients and optimizer states in 16-bit too (no fp32 master copy)")
    else:
        weights += trainable * (4 + (2 if job.half else 0))  # fp32 master + autocast's 16-bit copies
        grads += trainable * 4
        opt += trainable * (_optimizer_state_bytes(job.optim, 4) + 0.0)
        if job.half:
            notes.note("AMP: fp32 weights and gradients, 16-bit copies made by autocast")
    return _States(weights, grads, opt)


def _deepspeed_states(model: ModelSpec, trainable: float, frozen_bytes: float, job: _Job, n: int,
                      notes: _Notes) -> _States:
    """DeepSpeed mixed precision: 16-bit params (2) and grads (2), fp32 master, momentum, variance
    (12) and fp32 grads (4), sharded by stage (A1, A4)."""
    stage = job.zero or 0
    largest = float(max(model.vocab * model.hidden, model.hidden * model.intermediate))
    fp32_bytes = 4 + _optimizer_state_bytes(job.optim, 4) + 4
    if stage == 3:
        weights = (0 if job.offload_param else 2 * trainable / n) + 4 * largest / 2
        weights += 0 if job.offload_param else frozen_bytes / n
        weights += 2 * 2 * model.layer_params  # the gathered layer and the one prefetched
        grads = 2 * trainable / n + 4 * largest / 2
        opt = 0.0 if job.offload_opt else fp32_bytes * trainable / n
        notes.note(f"ZeRO-3 over {n} GPUs: 16-bit parameters, gradients and fp32 optimizer states sharded")
    else:
        weights = 2 * trainable + frozen_bytes
        grads = 2 * trainable / n if stage == 2 else 2 * trainable
        opt = 0.0 if job.offload_opt else fp32_bytes * trainable / (n if stage >= 1 else 1)
        notes.note(f"ZeRO-{stage} over {n} GPUs: 16-bit weights replicated"
                   + (", gradients and optimizer states sharded" if stage == 2 else
                      ", optimizer states sharded" if stage == 1 else ""))
    if job.offload_opt:
        notes.note("optimizer states and fp32 master weights offloaded to CPU")
    if job.offload_param and stage == 3:
        notes.note("parameters offloaded to CPU (ZeRO-3)")
    return _States(weights, grads, opt)


def _layer_bytes_per_token(model: ModelSpec, job: _Job, seq: int) -> Tuple[float, float]:
    """(stored bytes per token of one layer's activations, extra backward bytes per token)."""
    h, kv, inter, q = model.hidden, model.kv_dim, model.intermediate, model.q_dim
    if model.arch == "bert":
        # Korthikanti Eq. 1 (GPT/BERT layer with dropout).
        linear = 34.0 * h
        score = 5.0
    else:
        # SwiGLU keeps gate, up and their product; gelu_new keeps about as much of its internals.
        mlp = 8.0 * inter
        linear = 8.0 * h + 4.0 * q + 4.0 * kv + mlp + NORM_UPCAST_BYTES * h
        score = EAGER_SCORE_BYTES_SAVED
    width = 2.0 if job.half else 4.0
    linear *= width / 2.0
    stored = linear
    backward = linear * LAYER_BACKWARD_FACTOR
    if job.attn == "eager":
        scores = model.heads * seq * (score if job.half else 2 * score - 1)
        stored += scores
        backward += model.heads * seq * EAGER_SCORE_BYTES_BACKWARD * (1 if job.half else 2)
    elif job.attn == "sdpa" and not job.half:
        # SDPA's flash/memory-efficient kernels need 16-bit inputs; fp32 falls back to the math kernel.
        stored += model.heads * seq * 2 * score
    return stored, backward


@dataclass(frozen=True)
class _Dynamic:
    activations: float
    logits: float
    vision: float


def _train_dynamic(model: ModelSpec, vision: Optional[ModelSpec], job: _Job, batch: int,
                   notes: _Notes) -> _Dynamic:
    tokens = float(batch * job.multiplier * job.seq)
    stored_layer, backward_layer = _layer_bytes_per_token(model, job, job.seq)
    width = 2.0 if job.half else 4.0
    if job.ckpt:
        stored = width * model.hidden * model.layers * tokens
        working = (stored_layer + backward_layer) * tokens
        notes.note("gradient checkpointing: one layer input kept per layer, one layer recomputed at a time")
    else:
        stored = stored_layer * model.layers * tokens
        working = backward_layer * tokens
    if job.attn == "eager" and model.arch != "bert":
        notes.note("eager attention keeps the s x s attention scores of every head")
    fp32_logits = model.logits_fp32 or (job.half and job.zero is None) or not job.half
    per_vocab = LOGITS_BYTES_FP32_PATH if fp32_logits else LOGITS_BYTES_HALF_PATH
    logits = tokens * model.vocab * per_vocab
    return _Dynamic(stored + working, logits, _vision_dynamic(vision, job, batch, notes))


def _vision_dynamic(vision: Optional[ModelSpec], job: _Job, batch: int, notes: _Notes) -> float:
    if vision is None or not job.images_per_sample:
        return 0.0
    tiles = float(batch * job.multiplier * job.images_per_sample)
    s_v = vision.vision_tokens_per_tile
    if not job.vision_trainable:
        # Frozen tower under no_grad: one layer's forward at a time.
        return tiles * s_v * (korthikanti_activation_bytes(s_v, 1, vision.hidden, vision.heads, 1) / s_v)
    per_layer = korthikanti_activation_bytes(s_v, 1, vision.hidden, vision.heads, 1)
    notes.note(f"trainable vision tower: activations of {int(tiles)} image tiles x {s_v} tokens")
    if job.ckpt and job.vision_builtin:
        # A tower inside the model's own module tree is checkpointed with it (HF applies checkpointing
        # to every submodule that supports it); a LLaVA-style tower attached beside the LLM is not.
        stored = korthikanti_activation_bytes(s_v, 1, vision.hidden, vision.heads, vision.layers, "full")
        return tiles * (stored + 2 * per_layer)
    return tiles * per_layer * vision.layers


def _eval_peak(model: ModelSpec, job: _Job, states: _States, notes: _Notes) -> float:
    """Extra memory of the eval pass over the training peak's model states (no gradients live)."""
    if not job.eval_runs:
        return 0.0
    tokens = float(job.eval_batch * job.multiplier * job.seq)
    stored_layer, _ = _layer_bytes_per_token(model, job, job.seq)
    width = 2.0 if job.half else 4.0
    forward = tokens * (stored_layer + width * model.hidden)
    logits = tokens * model.vocab * (2 + 4 if model.logits_fp32 else 2)
    gathered = 0.0
    if job.eval_gathers:
        gathered = tokens * model.vocab * 4 * ASSUMED_EVAL_BATCHES
        notes.note("compute_metrics without eval_accumulation_steps: eval logits gathered on the GPU")
        notes.unknowns.append(f"eval set size unknown: assumed {ASSUMED_EVAL_BATCHES} batches of gathered logits")
        notes.assumed.add("eval_set_size")
    notes.note(f"evaluation runs with per-device eval batch {job.eval_batch}")
    return states.weights + states.optimizer + forward + logits + gathered


# --- Public API ----------------------------------------------------------------------------------


def estimate(run: TrainingRun, gpu: Gpu, overrides: Optional[Mapping[str, Value]] = None) -> JobMemoryEstimate:
    """Per-GPU peak memory (GiB) of `run` on `gpu`, with an interval, a breakdown and assumptions."""
    knobs = _Knobs(run, overrides)
    notes = _Notes()
    model = _resolve_with_overrides(run, knobs)
    if model is None:
        return _unknown_model_estimate(gpu, knobs, notes)
    if model.resolved_by != "catalog":
        notes.note(f"model dimensions from {model.source}")
        if model.resolved_by == "name size":
            notes.assumed.add("model")
    vision = resolve_vision(_with_overrides(run, knobs), model)
    job = _job(knobs, run, model, vision, notes)
    states = _model_states(model, vision, job, notes)
    dyn = _train_dynamic(model, vision, job, job.batch, notes)
    return _assemble(gpu, model, job, states, dyn, notes)


def _assemble(gpu: Gpu, model: ModelSpec, job: _Job, states: _States, dyn: _Dynamic,
              notes: _Notes) -> JobMemoryEstimate:
    state_bytes = states.weights + states.gradients + states.optimizer
    dynamic = dyn.activations + dyn.logits + dyn.vision
    fixed = FIXED_OVERHEAD_GIB * GIB + (NCCL_OVERHEAD_GIB * GIB if job.world > 1 else 0.0)
    overhead = fixed + FRAGMENTATION_DYNAMIC * dynamic + FRAGMENTATION_STATES * state_bytes
    train_peak = state_bytes + dynamic + overhead
    eval_total = _eval_peak(model, job, states, notes)
    eval_extra = max(0.0, eval_total + overhead - train_peak) if eval_total else 0.0
    peak = train_peak + eval_extra
    terms = {
        "weights": states.weights, "gradients": states.gradients, "optimizer": states.optimizer,
        "activations": dyn.activations, "logits": dyn.logits, "vision": dyn.vision, "eval": eval_extra,
        "overhead": overhead,
    }
    breakdown = {name: round(value / GIB, 3) for name, value in terms.items() if value > GIB * 5e-4}
    # The activation terms carry most of the uncertainty (kernels, padding, variable lengths); the
    # allocator can fragment further under variable-length multimodal batches.
    low = state_bytes * 0.95 + 0.7 * dynamic + 0.5 * fixed + eval_extra * 0.7
    high = state_bytes * (1 + 3 * FRAGMENTATION_STATES) + dynamic * 1.5 + 2 * fixed + eval_extra * 1.3
    notes.note("allocator/CUDA overhead: "
               f"{FIXED_OVERHEAD_GIB:g} GiB fixed, {FRAGMENTATION_DYNAMIC:.0%} of activations, "
               f"{FRAGMENTATION_STATES:.0%} of model states")
    return JobMemoryEstimate(
        gpu=gpu.key, capacity_gib=gpu.total_gib, peak_gib=round(peak / GIB, 2),
        low_gib=round(min(low, peak) / GIB, 2), high_gib=round(max(high, peak) / GIB, 2),
        breakdown=breakdown, assumptions=tuple(notes.assumptions), unknowns=tuple(notes.unknowns),
        assumed_inputs=frozenset(notes.assumed), model=model.key,
        sequence_tokens=job.seq, image_tokens=job.image_tokens, micro_batch=job.batch * job.multiplier,
    )


def _with_overrides(run: TrainingRun, knobs: _Knobs) -> TrainingRun:
    if not knobs.overrides:
        return run
    settings = dict(run.settings)
    for knob, value in knobs.overrides.items():
        settings[knob] = Setting(value=value, kind=SourceKind.ASSUMED, note="override")
    return replace(run, settings=settings)


def _resolve_with_overrides(run: TrainingRun, knobs: _Knobs) -> Optional[ModelSpec]:
    return resolve_model(_with_overrides(run, knobs))


def _unknown_model_estimate(gpu: Gpu, knobs: _Knobs, notes: _Notes) -> JobMemoryEstimate:
    name = knobs.get("model_name_or_path")
    notes.unknown("model", f"model '{name}' not identified: model states and activations not estimated"
                  if name else "model unknown: model states and activations not estimated")
    fixed = FIXED_OVERHEAD_GIB * GIB
    return JobMemoryEstimate(
        gpu=gpu.key, capacity_gib=gpu.total_gib, peak_gib=round(fixed / GIB, 2), low_gib=round(fixed / GIB, 2),
        high_gib=gpu.total_gib * 10, breakdown={"overhead": round(fixed / GIB, 3)},
        assumptions=tuple(notes.assumptions), unknowns=tuple(notes.unknowns),
        assumed_inputs=frozenset(notes.assumed), model="",
    )


def largest_fitting_batch(run: TrainingRun, gpu: Gpu, max_batch: int = 256,
                          overrides: Optional[Mapping[str, Value]] = None) -> Optional[int]:
    """The largest per-device train batch whose estimate fits `gpu` (None if 1 does not, or no model)."""
    base = dict(overrides or {})
    if resolve_model(_with_overrides(run, _Knobs(run, base))) is None:
        return None

    def fits(batch: int) -> bool:
        return estimate(run, gpu, {**base, "per_device_train_batch_size": batch}).fits

    if not fits(1):
        return None
    low, high = 1, 1
    while high < max_batch and fits(min(high * 2, max_batch)):
        low = high = min(high * 2, max_batch)
        if high == max_batch:
            return max_batch
    high = min(high * 2, max_batch)
    while low + 1 < high:  # memory grows monotonically with the batch
        middle = (low + high) // 2
        if fits(middle):
            low = middle
        else:
            high = middle
    return low


def _divides_into(total: int, batch: int) -> bool:
    return batch >= 1 and total % batch == 0


def suggestions(run: TrainingRun, gpu: Gpu, max_items: int = 8) -> List[Suggestion]:
    """'What would make it fit': each change with its knob overrides and new estimate, the ones that
    fit first (training-preserving before the rest), then by peak."""
    current = estimate(run, gpu)
    if not current.model:
        return []
    knobs = _Knobs(run, None)
    out: List[Suggestion] = []

    def add(description: str, overrides: Dict[str, Value], preserves: bool) -> None:
        new = estimate(run, gpu, overrides)
        if new.peak_gib < current.peak_gib - 0.05:
            out.append(Suggestion(description, dict(overrides), new, preserves))

    batch = knobs.int("per_device_train_batch_size")
    accum = knobs.int("gradient_accumulation_steps") or 1
    if batch and batch > 1:
        total = batch * accum
        fitting = largest_fitting_batch(run, gpu, max_batch=batch - 1) or 1
        chosen = next((b for b in range(min(fitting, batch - 1), 0, -1) if _divides_into(total, b)), 1)
        add(f"per-device batch {batch} -> {chosen} with gradient accumulation {accum} -> {total // chosen} "
            "(same effective batch)",
            {"per_device_train_batch_size": chosen, "gradient_accumulation_steps": total // chosen}, True)
    if knobs.bool("gradient_checkpointing") is not True:
        add("turn on gradient checkpointing", {"gradient_checkpointing": True}, True)
    if (knobs.str("attn_implementation") or "") in ("", "eager") and current.breakdown.get("activations", 0) > 0:
        add("use FlashAttention-2 / SDPA instead of eager attention", {"attn_implementation": "flash_attention_2"},
            True)
    zero = knobs.int("zero_stage")
    world = knobs.int("world_size") or 1
    if world > 1 and zero != 3:
        add("DeepSpeed ZeRO-3 (shard weights, gradients and optimizer states)", {"zero_stage": 3}, True)
    if not _offloaded(knobs.str("offload_optimizer")):
        stage = zero if zero in (1, 2, 3) else 2
        add(f"ZeRO-{stage} with the optimizer offloaded to CPU",
            {"zero_stage": stage, "offload_optimizer": "cpu"}, True)
    if zero == 3 and not _offloaded(knobs.str("offload_param")):
        add("ZeRO-3 with parameters and optimizer offloaded to CPU",
            {"offload_optimizer": "cpu", "offload_param": "cpu"}, True)
    if not knobs.bool("lora") and (knobs.int("bits") or 16) == 16:
        add("LoRA (train adapters, freeze the base)", {"lora": True}, False)
    elif (knobs.int("bits") or 16) == 16:
        add("QLoRA (4-bit base)", {"lora": True, "bits": 4}, False)
    seq = knobs.int("max_seq_length") or current.sequence_tokens
    if seq and seq > 512:
        shorter = max(512, seq // 2, current.image_tokens + 256)
        if shorter < seq:
            add(f"shorter sequence: max length {seq} -> {shorter}", {"max_seq_length": shorter}, False)
    tiles = knobs.int("image_tiles")
    if tiles and tiles > 1:
        add(f"fewer image tiles: {tiles} -> {max(1, tiles // 2)}", {"image_tiles": max(1, tiles // 2)}, False)
    out.sort(key=lambda s: (not s.estimate.fits, not s.preserves_training, s.estimate.peak_gib))
    return out[:max_items]
