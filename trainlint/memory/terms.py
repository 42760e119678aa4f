"""The memory terms of a training step, one function each, in bytes per GPU. Each cites the section
of docs/memory-model.md that states its formula and where the formula comes from. Constants that
come from measurement rather than a formula are named here and were checked against
benchmarks/data/memory_calibration.csv with one general model (no per-row cases).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from typing import Optional

from trainlint.memory.catalog import ModelSpec
from trainlint.memory.inputs import Attention, EstimateNotes, JobInputs

GIB = float(1 << 30)


class MemoryTerm(str, Enum):
    """The terms of an estimate's breakdown; the values are the breakdown's (and the JSON's) keys."""

    WEIGHTS = "weights"
    GRADIENTS = "gradients"
    OPTIMIZER = "optimizer"
    ACTIVATIONS = "activations"
    LOGITS = "logits"
    VISION = "vision"
    EVAL = "eval"
    OVERHEAD = "overhead"


# The breakdown keys of what every GPU holds before a single activation.
MODEL_STATE_TERMS = tuple(term.value for term in (MemoryTerm.WEIGHTS, MemoryTerm.GRADIENTS, MemoryTerm.OPTIMIZER))

# --- Constants (bytes unless noted) -----------------------------------------------------------
# docs/memory-model.md §8: loss path per token per vocab entry at its peak. 16-bit logits, an fp32
# copy for the loss, the fp32 log-softmax saved for backward and its gradient (three fp32-sized
# buffers + the half copy) when the model upcasts logits or runs under autocast; half of that when
# everything stays 16-bit.
LOGITS_BYTES_FP32_PATH = 12.0
LOGITS_BYTES_HALF_PATH = 6.0
# docs/memory-model.md §8, §17: unsloth's Fast_CrossEntropyLoss (unsloth/kernels/cross_entropy_loss.py)
# reads the 16-bit logits, keeps one fp32 logsumexp per token and writes the gradient into the logits
# tensor itself: 2 bytes per token per vocab entry.
LOGITS_BYTES_IN_PLACE_LOSS = 2.0
# docs/memory-model.md §7: eager attention keeps the fp32 softmax output and the 16-bit probabilities
# per score; during that layer's backward about as much again is live as gradients of the scores.
EAGER_SCORE_BYTES_SAVED = 6.0
EAGER_SCORE_BYTES_BACKWARD = 8.0
# docs/memory-model.md §7: Korthikanti's attention-score bytes per score (GPT/BERT layer with dropout).
KORTHIKANTI_SCORE_BYTES = 5.0
# docs/memory-model.md §7: HF eager RMSNorm/LayerNorm upcasts to fp32, so autograd keeps fp32 copies:
# about 8 bytes per hidden element per norm, two norms per layer.
NORM_UPCAST_BYTES = 16.0
# docs/memory-model.md §7: a layer's backward holds gradients of its activations next to the activations.
LAYER_BACKWARD_FACTOR = 1.0
# docs/memory-model.md §12: CUDA context beyond what the usable capacity already excludes, cuBLAS
# workspaces; NCCL buffers when more than one GPU takes part.
FIXED_OVERHEAD_GIB = 1.0
NCCL_OVERHEAD_GIB = 0.5
# docs/memory-model.md §12: caching-allocator fragmentation as a share of the dynamic (activation)
# memory and of the model states.
FRAGMENTATION_DYNAMIC = 0.10
FRAGMENTATION_STATES = 0.05
# docs/memory-model.md §6: quantized linear weights in bytes per parameter. NF4 with double
# quantization is 4.127 bits, GPTQ 4-bit with groups of 128 about 4.25.
QUANT_BYTES = {4: 0.53, 8: 1.06}
# docs/memory-model.md §6: a two-layer MLP projector (1024 -> 4096 -> 4096, LLaVA-1.5 mlp2x_gelu) is
# about 21M parameters.
PROJECTOR_PARAMS = 21e6
# docs/memory-model.md §17: Liger's fused linear cross-entropy materialises the logits of one chunk of
# about ceil(tokens / ceil(V / h)) tokens at a time, i.e. about tokens x h values in fp32, plus their
# gradient; cut cross-entropy holds less. Bytes per token per hidden unit.
FUSED_LOSS_BYTES_PER_HIDDEN = 8.0
# docs/memory-model.md §11: gathered eval logits are counted for this many batches (the eval set's
# size is not known statically).
ASSUMED_EVAL_BATCHES = 10


# --- Published reference formulas (pinned to their sources by tests) -------------------------------


def zero2_model_states_bytes(total_params: float, num_gpus: int, cpu_offload: bool = False) -> float:
    """DeepSpeed `estimate_zero2_model_states_mem_needs` GPU bytes, current form (docs/memory-model.md §5)."""
    if cpu_offload:
        return 2 * total_params
    return 2 * total_params + int(18 * total_params / num_gpus)


def zero3_model_states_bytes(total_params: float, largest_layer_params: float, num_gpus: int,
                             cpu_offload: bool = False, cpu_offload_params: bool = False) -> float:
    """DeepSpeed `estimate_zero3_model_states_mem_needs` GPU bytes (docs/memory-model.md §5)."""
    largest_layer_memory = 4 * largest_layer_params
    if cpu_offload and cpu_offload_params:
        return largest_layer_memory
    if cpu_offload:
        return largest_layer_memory + int(2 * total_params / num_gpus)
    return largest_layer_memory + int(18 * total_params / num_gpus)


def korthikanti_activation_bytes(seq: int, batch: int, hidden: int, heads: int, layers: int,
                                 recompute: str = "none") -> float:
    """Korthikanti et al. Table 2 without parallelism: sbh(34 + 5as/h) per layer; full recompute 2sbh
    (docs/memory-model.md §7)."""
    sbh = seq * batch * hidden
    if recompute == "full":
        return 2.0 * sbh * layers
    if recompute == "selective":
        return 34.0 * sbh * layers
    return sbh * (34.0 + 5.0 * heads * seq / hidden) * layers


def lora_adapter_params(model: ModelSpec, r: int) -> float:
    """r·(d_in + d_out) for every linear of every layer: q, k, v, o and the MLP matrices
    (docs/memory-model.md §6)."""
    h, q, kv, inter = model.hidden, model.q_dim, model.kv_dim, model.intermediate
    attn = (h + q) + 2 * (h + kv) + (q + h)
    mlp = 2 * (h + inter) + (inter + h) if model.mlp == "swiglu" else 2 * (h + inter)
    return float(r * (attn + mlp) * model.layers)


def optimizer_state_bytes_per_param(optimizer: str, state_dtype_bytes: float) -> float:
    """Bytes of optimizer state per trained parameter, beyond any master copy (docs/memory-model.md §4)."""
    if "8bit" in optimizer or "bnb" in optimizer:
        return 2.0
    if "adafactor" in optimizer:
        return 0.5
    if "sgd" in optimizer:
        return 0.0
    if "lion" in optimizer:
        return state_dtype_bytes
    return 2.0 * state_dtype_bytes


# --- Which parameters train, and how the frozen ones are stored (docs/memory-model.md §6) -----------


@dataclass(frozen=True)
class ParameterSplit:
    """The parameters of the job by role: trained adapters or weights, trained full copies of the
    embedding/output layers next to LoRA, and the bytes of everything frozen."""

    trainable: float
    embedding_copies: float
    frozen_bytes: float

    @property
    def trained(self) -> float:
        return self.trainable + self.embedding_copies


def parameter_split(model: ModelSpec, vision: Optional[ModelSpec], job: JobInputs,
                    notes: EstimateNotes) -> ParameterSplit:
    """docs/memory-model.md §6."""
    tower = vision.params if vision is not None else 0.0
    llm = model.params
    if job.lora:
        trainable = lora_adapter_params(model, job.lora_rank)
        copies = job.trained_embedding_copies * model.vocab * model.hidden
        frozen = llm
        notes.note(f"LoRA r={job.lora_rank} on every linear layer: {trainable / 1e6:.0f}M trainable adapter parameters")
        if copies:
            notes.note(f"embedding/output layers trained as full copies: {copies / 1e9:.2f}B extra parameters")
    elif job.frozen_base:
        trainable, copies, frozen = PROJECTOR_PARAMS, 0.0, llm
        if not job.frozen_in_code:  # else the estimate's unknowns say where code freezes parameters
            notes.note("only the multimodal projector trains: the LLM is frozen (tune_mm_mlp_adapter / "
                       "freeze_backbone / freeze_llm)")
    else:
        trainable, copies, frozen = llm, 0.0, 0.0
    if vision is not None:
        if job.vision_trainable:
            trainable += tower
        else:
            frozen += tower  # frozen tower weights sit with the frozen base
    return ParameterSplit(trainable, copies, _frozen_bytes(model, llm, frozen, job, notes))


def _frozen_bytes(model: ModelSpec, llm: float, frozen: float, job: JobInputs, notes: EstimateNotes) -> float:
    """Frozen weights: 16-bit, or quantized linear layers next to 16-bit embeddings (docs/memory-model.md §6)."""
    if job.quant_bits in QUANT_BYTES and (job.lora or job.frozen_base):
        embeddings = model.embedding_params
        per_param = QUANT_BYTES[job.quant_bits]
        notes.note(f"{job.quant_bits}-bit base: linear weights at {per_param} B/param, embeddings 16-bit")
        return (llm - embeddings) * per_param + embeddings * 2 + (frozen - llm) * 2
    return frozen * (2 if job.weights_half or job.zero_stage is not None else 4)


def note_model_state_layout(job: JobInputs, notes: EstimateNotes) -> None:
    """What the weights, gradients and optimizer terms assume about precision and sharding."""
    n = job.world_size
    gpus = "1 GPU" if n == 1 else f"{n} GPUs"
    if job.fsdp:
        kind = "full sharding" if job.zero_stage == 3 else "shard_grad_op"
        dtype = "16-bit" if job.weights_half else "fp32"
        notes.note(f"FSDP {kind} over {gpus}: {dtype} parameters, gradients and optimizer states sharded, "
                   f"16-bit units gathered for compute" + ("; parameters and states offloaded to CPU"
                                                           if job.offload_params else ""))
    elif job.zero_stage is not None:
        stage = job.zero_stage
        if stage == 3:
            notes.note(f"ZeRO-3 over {gpus}: 16-bit parameters, gradients and fp32 optimizer states sharded")
        else:
            notes.note(f"ZeRO-{stage} over {gpus}: 16-bit weights replicated"
                       + (", gradients and optimizer states sharded" if stage == 2 else
                          ", optimizer states sharded" if stage == 1 else ""))
        if job.offload_optimizer:
            notes.note("optimizer states and fp32 master weights offloaded to CPU")
        if job.offload_params and stage == 3:
            notes.note("parameters offloaded to CPU (ZeRO-3)")
    elif job.lora:
        pass  # PEFT keeps adapters in fp32: nothing beyond the LoRA note to say
    elif job.weights_half:
        notes.note("weights loaded in 16-bit: gradients and optimizer states in 16-bit too (no fp32 master copy)")
    elif job.mixed_precision:
        notes.note("AMP: fp32 weights and gradients, 16-bit copies made by autocast")


# --- Model states -----------------------------------------------------------------------------------


def _largest_layer_params(model: ModelSpec) -> float:
    return float(max(model.vocab * model.hidden, model.hidden * model.intermediate))


def _deepspeed_fp32_bytes(job: JobInputs) -> float:
    """fp32 master weights, optimizer states and fp32 gradients per trained parameter (§5)."""
    return 4 + optimizer_state_bytes_per_param(job.optimizer, 4) + 4


# ZeRO-3 step group (`sub_group_size`): DeepSpeed's default, in elements (deepspeed/runtime/zero/config.py).
ZERO3_SUB_GROUP_ELEMENTS = 1e9


def _zero3_step_bytes(partition: float, job: JobInputs) -> float:
    """What ZeRO-3's optimizer step holds beyond its resident states (§5). It steps this GPU's partition one group
    of `sub_group_size` elements at a time (stage3.py `step`): the group's 16-bit gradients are copied to fp32
    (`_prepare_fp32_grad_for_sub_group`) and freed once the group is stepped (`_release_sub_group`), and torch's
    AdamW (foreach, torch >= 2.1) makes one fp32 temporary of the group for its square root."""
    temporary = 4 if optimizer_state_bytes_per_param(job.optimizer, 4) == 8 else 0
    return (4 + temporary) * min(partition, ZERO3_SUB_GROUP_ELEMENTS)


def _embedding_copy_bytes(job: JobInputs) -> int:
    return 2 if job.weights_half else 4


def _fsdp_param_bytes(job: JobInputs) -> int:
    """FSDP keeps the sharded parameters (and so gradients and optimizer states) in the dtype the model
    was loaded in; mixed precision casts a gathered unit to 16-bit for compute (docs/memory-model.md §17)."""
    return 2 if job.weights_half else 4


def _fsdp_gathered_bytes(model: ModelSpec) -> float:
    """The 16-bit unit being computed and the one prefetched (FSDP's forward/backward prefetch)."""
    return 2 * 2 * model.layer_params


def _fsdp_shards(job: JobInputs) -> int:
    """Full sharding splits over every GPU; shard_grad_op (stage 2) keeps the parameters whole."""
    return job.world_size


def fsdp_weights_bytes(model: ModelSpec, split: ParameterSplit, job: JobInputs) -> float:
    if job.offload_params:
        return _fsdp_gathered_bytes(model)
    shards = _fsdp_shards(job) if job.zero_stage == 3 else 1
    return (_fsdp_param_bytes(job) * split.trained + split.frozen_bytes) / shards + _fsdp_gathered_bytes(model)


def fsdp_gradients_bytes(split: ParameterSplit, job: JobInputs) -> float:
    if job.offload_params:
        return 0.0
    return _fsdp_param_bytes(job) * split.trained / _fsdp_shards(job)


def fsdp_optimizer_bytes(split: ParameterSplit, job: JobInputs) -> float:
    if job.offload_params or job.offload_optimizer:
        return 0.0
    per_param = optimizer_state_bytes_per_param(job.optimizer, _fsdp_param_bytes(job))
    return per_param * split.trained / _fsdp_shards(job)


def weights_bytes(model: ModelSpec, split: ParameterSplit, job: JobInputs) -> float:
    """docs/memory-model.md §3 (no ZeRO) and §5 (ZeRO)."""
    n = job.world_size
    if job.fsdp:
        return fsdp_weights_bytes(model, split, job)
    if job.zero_stage == 3:
        weights = (0 if job.offload_params else 2 * split.trained / n) + 4 * _largest_layer_params(model) / 2
        weights += 0 if job.offload_params else split.frozen_bytes / n
        return weights + 2 * 2 * model.layer_params  # the gathered layer and the one prefetched
    if job.zero_stage is not None:
        return 2 * split.trained + split.frozen_bytes
    if job.lora:
        return split.frozen_bytes + split.trainable * 4 + split.embedding_copies * _embedding_copy_bytes(job)
    if job.weights_half:
        return split.frozen_bytes + split.trainable * 2
    # fp32 master + autocast's 16-bit copies
    return split.frozen_bytes + split.trainable * (4 + (2 if job.mixed_precision else 0))


def gradients_bytes(model: ModelSpec, split: ParameterSplit, job: JobInputs) -> float:
    """docs/memory-model.md §3 (no ZeRO) and §5 (ZeRO)."""
    n = job.world_size
    if job.fsdp:
        return fsdp_gradients_bytes(split, job)
    if job.zero_stage == 3:
        return 2 * split.trained / n + 4 * _largest_layer_params(model) / 2
    if job.zero_stage is not None:
        buckets = 2 * job.gradient_bucket_elements  # 16-bit gradient buckets (§5)
        return (2 * split.trained / n if job.zero_stage == 2 else 2 * split.trained) + buckets
    if job.lora:
        return split.trainable * 4 + split.embedding_copies * _embedding_copy_bytes(job)
    return split.trainable * (2 if job.weights_half else 4)


def optimizer_bytes(split: ParameterSplit, job: JobInputs) -> float:
    """Optimizer states, with the fp32 master copy where one is kept: docs/memory-model.md §3-§5."""
    if job.optimizer_pages_out:
        return 0.0
    if job.fsdp:
        return fsdp_optimizer_bytes(split, job)
    if job.zero_stage is not None:
        if job.offload_optimizer:
            return 0.0
        shards = job.world_size if job.zero_stage >= 1 else 1
        if job.zero_stage == 3:
            # The fp32 gradients exist during the step only, a group at a time (step_bytes).
            return (_deepspeed_fp32_bytes(job) - 4) * split.trained / shards
        return _deepspeed_fp32_bytes(job) * split.trained / shards
    if job.lora:
        # PEFT keeps adapters in fp32; torch AdamW keeps states in the parameter dtype.
        copy_bytes = _embedding_copy_bytes(job)
        return (split.trainable * (optimizer_state_bytes_per_param(job.optimizer, 4) + 4)
                + split.embedding_copies * (optimizer_state_bytes_per_param(job.optimizer, copy_bytes) + copy_bytes))
    if job.weights_half:
        return split.trainable * (optimizer_state_bytes_per_param(job.optimizer, 2) + 2)
    return split.trainable * (optimizer_state_bytes_per_param(job.optimizer, 4) + 0.0)


@dataclass(frozen=True)
class ModelStates:
    """What every GPU holds before a single activation, in bytes."""

    weights: float
    gradients: float
    optimizer: float
    # What the optimizer step adds for its own duration (ZeRO-3's fp32 gradients of one group, and AdamW's
    # temporary): the activations are freed by then, so it counts only where it exceeds them (§13).
    step: float = 0.0

    @property
    def total(self) -> float:
        return self.weights + self.gradients + self.optimizer


def reference_weights_bytes(model: ModelSpec, vision: Optional[ModelSpec], job: JobInputs) -> float:
    """docs/memory-model.md §6: a frozen reference model, loaded like the trained one in its compute dtype and
    prepared by the trainer's DeepSpeed or FSDP (TRL's `prepare_deepspeed` keeps ZeRO-3 and its parameter offload
    for it, and runs stage 0, a whole copy on every GPU, below stage 3)."""
    if not job.reference_model:
        return 0.0
    params = model.params + (vision.params if vision is not None else 0.0)
    whole = params * (2 if job.weights_half or job.mixed_precision else 4)
    if job.fsdp:
        return whole / _fsdp_shards(job)
    if job.zero_stage == 3:
        return 0.0 if job.offload_params else whole / job.world_size
    return whole


def model_states(model: ModelSpec, vision: Optional[ModelSpec], job: JobInputs, notes: EstimateNotes) -> ModelStates:
    split = parameter_split(model, vision, job, notes)
    note_model_state_layout(job, notes)
    weights = weights_bytes(model, split, job) + reference_weights_bytes(model, vision, job)
    return ModelStates(weights, gradients_bytes(model, split, job), optimizer_bytes(split, job), step_bytes(split, job))


def step_bytes(split: ParameterSplit, job: JobInputs) -> float:
    """The optimizer step's own working memory beyond the resident states (§5): ZeRO-3's, unless the optimizer
    is offloaded or pages out."""
    if job.fsdp or job.zero_stage != 3 or job.offload_optimizer or job.optimizer_pages_out:
        return 0.0
    return _zero3_step_bytes(split.trained / job.world_size, job)


# --- Activations, logits, vision tower ---------------------------------------------------------------


def _activation_width(job: JobInputs) -> float:
    return 2.0 if job.computes_in_half else 4.0


def layer_bytes_per_token(model: ModelSpec, job: JobInputs, seq: int) -> tuple[float, float]:
    """(stored bytes per token of one layer's activations, extra bytes per token during its backward):
    docs/memory-model.md §7."""
    h, kv, inter, q = model.hidden, model.kv_dim, model.intermediate, model.q_dim
    if model.arch == "bert":
        # Korthikanti Eq. 1 (GPT/BERT layer with dropout).
        linear = 34.0 * h
        score = KORTHIKANTI_SCORE_BYTES
    else:
        # SwiGLU keeps gate, up and their product; gelu_new keeps about as much of its internals.
        mlp = 8.0 * inter
        if job.tiled_mlp:
            # ALST's TiledMLP runs the MLP over ceil(s / h) shards of the sequence: one shard's
            # intermediates are live at a time.
            mlp /= max(1, math.ceil(seq / h))
        linear = 8.0 * h + 4.0 * q + 4.0 * kv + mlp + NORM_UPCAST_BYTES * h
        score = EAGER_SCORE_BYTES_SAVED
    linear *= _activation_width(job) / 2.0
    stored = linear
    backward = linear * LAYER_BACKWARD_FACTOR
    if job.attention == Attention.EAGER:
        stored += model.heads * seq * (score if job.computes_in_half else 2 * score - 1)
        backward += model.heads * seq * EAGER_SCORE_BYTES_BACKWARD * (1 if job.computes_in_half else 2)
    elif job.attention == Attention.SDPA and not job.computes_in_half:
        # SDPA's flash/memory-efficient kernels need 16-bit inputs; fp32 falls back to the math kernel.
        stored += model.heads * seq * 2 * score
    return stored, backward


def _tokens(job: JobInputs, batch: int) -> float:
    """Tokens one GPU holds activations for: sequence parallelism splits each sequence (docs/memory-model.md §17)."""
    return float(batch * job.sequences_per_item * job.sequence) / job.sequence_parallel


def activations_bytes(model: ModelSpec, job: JobInputs, batch: int, notes: EstimateNotes) -> float:
    """The LLM's activations at the peak of a training step: docs/memory-model.md §7."""
    tokens = _tokens(job, batch)
    stored_layer, backward_layer = layer_bytes_per_token(model, job, job.sequence)
    # Only layers from the first trainable one on keep activations for the backward pass (inputs.py).
    layers = 1 if job.activations_from_last_layer else model.layers
    if job.checkpointing:
        stored = 0.0 if job.activation_offload else _activation_width(job) * model.hidden * layers * tokens
        working = (stored_layer + backward_layer) * tokens
        notes.note("gradient checkpointing: one layer input kept per layer, one layer recomputed at a time")
    else:
        stored = stored_layer * layers * tokens
        working = backward_layer * tokens
    if job.attention == Attention.EAGER and model.arch != "bert":
        notes.note("eager attention keeps the s x s attention scores of every head")
    return stored + working


def logits_bytes(model: ModelSpec, job: JobInputs, batch: int) -> float:
    """The logits and the loss over the vocabulary: docs/memory-model.md §8."""
    if job.fused_loss:
        return _tokens(job, batch) * model.hidden * FUSED_LOSS_BYTES_PER_HIDDEN
    if job.in_place_loss:
        return _tokens(job, batch) * model.vocab * LOGITS_BYTES_IN_PLACE_LOSS
    fp32_logits = model.logits_fp32 or (job.mixed_precision and job.zero_stage is None) or not job.mixed_precision
    per_vocab = LOGITS_BYTES_FP32_PATH if fp32_logits else LOGITS_BYTES_HALF_PATH
    return _tokens(job, batch) * model.vocab * per_vocab


def vision_tower_bytes(vision: Optional[ModelSpec], job: JobInputs, batch: int, notes: EstimateNotes) -> float:
    """Activations of the vision tower: docs/memory-model.md §10."""
    if vision is None or not job.images_per_sample:
        return 0.0
    tiles = float(batch * job.sequences_per_item * job.images_per_sample)
    s_v = vision.vision_tokens_per_tile
    # The s x s scores exist only under eager attention: a tower whose code has none other keeps them; one
    # with SDPA/FlashAttention (Qwen2-VL's) runs the attention the model runs when it is part of the model
    # (HF hands the composite model's attn_implementation to its vision config).
    eager = vision.default_attn == "eager" or (job.vision_builtin and job.attention == Attention.EAGER)
    per_layer = korthikanti_activation_bytes(s_v, 1, vision.hidden, vision.heads, 1, "none" if eager else "selective")
    if not job.vision_trainable:
        # Frozen tower under no_grad: one layer's forward at a time.
        return tiles * s_v * (per_layer / s_v)
    notes.note(f"trainable vision tower: activations of {int(tiles)} image tiles x {s_v} tokens")
    if job.vision_checkpointed:
        # A tower inside the model's own module tree is checkpointed with it, and from transformers 4.35 one
        # attached beside the LLM too (HF applies checkpointing to every submodule that supports it).
        stored = korthikanti_activation_bytes(s_v, 1, vision.hidden, vision.heads, vision.layers, "full")
        return tiles * (stored + 2 * per_layer)
    return tiles * per_layer * vision.layers


@dataclass(frozen=True)
class DynamicMemory:
    """Memory that grows with the micro-batch, in bytes."""

    activations: float
    logits: float
    vision: float

    @property
    def total(self) -> float:
        return self.activations + self.logits + self.vision


def training_dynamic(model: ModelSpec, vision: Optional[ModelSpec], job: JobInputs, batch: int,
                     notes: EstimateNotes) -> DynamicMemory:
    activations = activations_bytes(model, job, batch, notes)
    logits = logits_bytes(model, job, batch)
    return DynamicMemory(activations, logits, vision_tower_bytes(vision, job, batch, notes))


# --- Evaluation pass and overhead ------------------------------------------------------------------


def eval_pass_bytes(model: ModelSpec, job: JobInputs, states: ModelStates, notes: EstimateNotes) -> float:
    """Peak of the eval pass (no gradients live), or 0 when no evaluation runs: docs/memory-model.md §11."""
    if not job.eval_runs:
        return 0.0
    tokens = _tokens(job, job.eval_batch)
    stored_layer, _ = layer_bytes_per_token(model, job, job.sequence)
    forward = tokens * (stored_layer + _activation_width(job) * model.hidden)
    logits = 0.0 if job.classifier else tokens * model.vocab * (2 + 4 if model.logits_fp32 else 2)
    gathered = 0.0
    if job.eval_gathers_logits:
        gathered = tokens * model.vocab * 4 * ASSUMED_EVAL_BATCHES
        notes.note("compute_metrics without eval_accumulation_steps: eval logits gathered on the GPU")
        notes.unknowns.append(f"eval set size unknown: assumed {ASSUMED_EVAL_BATCHES} batches of gathered logits")
        notes.assumed.add("eval_set_size")
    notes.note(f"evaluation runs with per-device eval batch {job.eval_batch}")
    return states.weights + states.optimizer + forward + logits + gathered


def fixed_overhead_bytes(world_size: int) -> float:
    """CUDA context and workspaces, and NCCL buffers on more than one GPU: docs/memory-model.md §12."""
    return FIXED_OVERHEAD_GIB * GIB + (NCCL_OVERHEAD_GIB * GIB if world_size > 1 else 0.0)


def overhead_bytes(fixed: float, dynamic: float, state_bytes: float) -> float:
    """Fixed overhead plus allocator fragmentation: docs/memory-model.md §12."""
    return fixed + FRAGMENTATION_DYNAMIC * dynamic + FRAGMENTATION_STATES * state_bytes


def note_overhead(notes: EstimateNotes) -> None:
    notes.note("allocator/CUDA overhead: "
               f"{FIXED_OVERHEAD_GIB:g} GiB fixed, {FRAGMENTATION_DYNAMIC:.0%} of activations, "
               f"{FRAGMENTATION_STATES:.0%} of model states")
