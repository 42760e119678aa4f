"""The estimate of one job: its inputs read, its terms added up into the training peak (and the eval
pass's, when it runs higher), an interval around the peak and the assumptions behind it.

docs/memory-model.md §13 states how the terms combine and what each interval factor stands for.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import FrozenSet, Mapping, Optional

from trainlint.core import MemoryEstimate, TrainingRun, Value
from trainlint.knobs import K
from trainlint.memory.catalog import ModelSpec, resolve_model, resolve_vision
from trainlint.memory.gpus import Gpu
from trainlint.memory.inputs import EstimateNotes, JobInputs, KnobReader, read_job_inputs, with_overrides
from trainlint.memory.terms import (
    FRAGMENTATION_STATES,
    GIB,
    DynamicMemory,
    MemoryTerm,
    ModelStates,
    eval_pass_bytes,
    fixed_overhead_bytes,
    model_states,
    note_overhead,
    overhead_bytes,
    training_dynamic,
)
from trainlint.readers.source import remembered

# Breakdown terms below this share of a GiB are left out of the breakdown.
SMALLEST_REPORTED_GIB = 5e-4
# An unidentified model has no upper bound worth the name: this many times the GPU's capacity.
UNKNOWN_MODEL_HIGH_FACTOR = 10


@dataclass(frozen=True)
class Band:
    """How far one part of the peak may plausibly sit below and above its estimate (multipliers)."""

    low: float
    high: float


@dataclass(frozen=True)
class IntervalFactors:
    """The multipliers that turn the peak's parts into the interval (docs/memory-model.md §13)."""

    # Model states follow from the parameter count and dtypes: close, plus fragmentation of up to
    # three times the share already counted.
    model_states: Band
    # Activations, logits and the vision tower carry most of the uncertainty (kernels, padding,
    # variable lengths), and the allocator can fragment further under variable-length multimodal batches.
    dynamic: Band
    # CUDA context, workspaces and NCCL buffers differ by library version and launch.
    fixed_overhead: Band
    # The eval pass's excess over the training peak rests on the same activation terms.
    eval_excess: Band


INTERVAL = IntervalFactors(
    model_states=Band(low=0.95, high=1 + 3 * FRAGMENTATION_STATES),
    dynamic=Band(low=0.7, high=1.5),
    fixed_overhead=Band(low=0.5, high=2),
    eval_excess=Band(low=0.7, high=1.3),
)


@dataclass(frozen=True)
class JobMemoryEstimate(MemoryEstimate):
    """A MemoryEstimate plus what it rests on. `assumed_inputs` names the inputs that were guessed
    ("batch", "sequence", "model", "world_size", ...); rules should stay quiet when a risk depends on them."""

    assumed_inputs: FrozenSet[str] = frozenset()
    model: str = ""
    sequence_tokens: int = 0
    image_tokens: int = 0
    micro_batch: int = 0
    sequences_per_sample: int = 1  # 2 for a preference pair (chosen and rejected answers in one batch)

    @property
    def rests_on_assumptions(self) -> bool:
        return bool(self.assumed_inputs & {"batch", "sequence", "model"})


def estimate(run: TrainingRun, gpu: Gpu, overrides: Optional[Mapping[str, Value]] = None) -> JobMemoryEstimate:
    """Per-GPU peak memory (GiB) of `run` on `gpu`, with an interval, a breakdown and assumptions. Worked out once
    per job, GPU and overrides while a scan runs: the linter and several rules ask for the same training step."""
    try:
        key = (id(run), gpu, tuple(sorted((str(knob), value) for knob, value in (overrides or {}).items())))
        hash(key)
    except TypeError:  # an override value that cannot be a key: worked out each time
        return _estimate(run, gpu, overrides)
    # The job itself is kept with its estimate: while the scan remembers it, no other job can take its id.
    return remembered("memory-estimate", key, lambda: (run, _estimate(run, gpu, overrides)))[1]


def _estimate(run: TrainingRun, gpu: Gpu, overrides: Optional[Mapping[str, Value]]) -> JobMemoryEstimate:
    knobs = KnobReader(run, overrides)
    notes = EstimateNotes()
    overridden = with_overrides(run, knobs.overrides)
    model = resolve_model(overridden)
    if model is None:
        return _unknown_model_estimate(gpu, knobs, notes)
    if model.resolved_by != "catalog":
        notes.note(f"model dimensions from {model.source}")
        if model.resolved_by == "name size":
            notes.assumed.add("model")
    vision = resolve_vision(overridden, model)
    job = read_job_inputs(knobs, run, model, vision, notes, gpu)
    states = model_states(model, vision, job, notes)
    dynamic = training_dynamic(model, vision, job, job.per_device_batch, notes)
    return _assemble(gpu, model, job, states, dynamic, notes)


def model_identified(run: TrainingRun, overrides: Optional[Mapping[str, Value]] = None) -> bool:
    """Whether the estimate can identify the model of `run` (with `overrides` in place)."""
    return resolve_model(with_overrides(run, dict(overrides or {}))) is not None


def _assemble(gpu: Gpu, model: ModelSpec, job: JobInputs, states: ModelStates, dynamic_terms: DynamicMemory,
              notes: EstimateNotes) -> JobMemoryEstimate:
    """docs/memory-model.md §13."""
    dynamic = dynamic_terms.total
    # The optimizer step runs once the backward pass has freed the activations: its working memory raises the peak
    # only by what it holds beyond them (docs/memory-model.md §13).
    step_extra = max(0.0, states.step - dynamic)
    state_bytes = states.total + step_extra
    fixed = fixed_overhead_bytes(job.world_size)
    overhead = overhead_bytes(fixed, dynamic, state_bytes)
    train_peak = state_bytes + dynamic + overhead
    eval_total = eval_pass_bytes(model, job, states, notes)
    eval_extra = max(0.0, eval_total + overhead - train_peak) if eval_total else 0.0
    peak = train_peak + eval_extra
    terms = {
        MemoryTerm.WEIGHTS: states.weights, MemoryTerm.GRADIENTS: states.gradients,
        MemoryTerm.OPTIMIZER: states.optimizer + step_extra, MemoryTerm.ACTIVATIONS: dynamic_terms.activations,
        MemoryTerm.LOGITS: dynamic_terms.logits, MemoryTerm.VISION: dynamic_terms.vision,
        MemoryTerm.EVAL: eval_extra, MemoryTerm.OVERHEAD: overhead,
    }
    breakdown = {term.value: round(value / GIB, 3) for term, value in terms.items()
                 if value > GIB * SMALLEST_REPORTED_GIB}
    low = (state_bytes * INTERVAL.model_states.low + INTERVAL.dynamic.low * dynamic
           + INTERVAL.fixed_overhead.low * fixed + eval_extra * INTERVAL.eval_excess.low)
    high = (state_bytes * INTERVAL.model_states.high + dynamic * INTERVAL.dynamic.high
            + INTERVAL.fixed_overhead.high * fixed + eval_extra * INTERVAL.eval_excess.high)
    note_overhead(notes)
    return JobMemoryEstimate(
        gpu=gpu.key, capacity_gib=gpu.total_gib, peak_gib=round(peak / GIB, 2),
        low_gib=round(min(low, peak) / GIB, 2), high_gib=round(max(high, peak) / GIB, 2),
        breakdown=breakdown, assumptions=tuple(notes.assumptions), unknowns=tuple(notes.unknowns),
        assumed_inputs=frozenset(notes.assumed), model=model.key,
        sequence_tokens=job.sequence, image_tokens=job.image_tokens, micro_batch=job.samples_per_device,
        sequences_per_sample=job.sequences_per_sample,
    )


def _unknown_model_estimate(gpu: Gpu, knobs: KnobReader, notes: EstimateNotes) -> JobMemoryEstimate:
    name = knobs.get(K.MODEL_NAME_OR_PATH)
    notes.unknown("model", f"model '{name}' not identified: model states and activations not estimated"
                  if name else "model unknown: model states and activations not estimated")
    fixed = fixed_overhead_bytes(world_size=1)
    return JobMemoryEstimate(
        gpu=gpu.key, capacity_gib=gpu.total_gib, peak_gib=round(fixed / GIB, 2), low_gib=round(fixed / GIB, 2),
        high_gib=gpu.total_gib * UNKNOWN_MODEL_HIGH_FACTOR,
        breakdown={MemoryTerm.OVERHEAD.value: round(fixed / GIB, 3)},
        assumptions=tuple(notes.assumptions), unknowns=tuple(notes.unknowns),
        assumed_inputs=frozenset(notes.assumed), model="",
    )
