"""Memory model: per-GPU peak memory of a training run, with an interval, a breakdown and the
assumptions behind it; what fits; model and GPU catalogs. docs/memory-model.md documents the formulas.

Modules: `inputs` (what the estimate reads about a job), `terms` (one function per memory term),
`assembly` (the peak and its interval), `fitting` (the largest batch or longest sequence that fits),
`suggest` (changes that make a job fit), `catalog` and `gpus`."""
from __future__ import annotations

from trainlint.memory.catalog import (
    ModelSpec,
    find_model,
    find_vision_tower,
    model_catalog,
    resolve_model,
    resolve_vision,
)

# `estimate` is both a module and the function it re-exports: the module is imported first, so that
# the package's `estimate` name ends up bound to the function.
from trainlint.memory.estimate import (
    JobMemoryEstimate,
    Suggestion,
    estimate,
    korthikanti_activation_bytes,
    largest_fitting_batch,
    lora_adapter_params,
    suggestions,
    zero2_model_states_bytes,
    zero3_model_states_bytes,
)
from trainlint.memory.fitting import BatchSplit, longest_fitting_sequence, split_keeping_product
from trainlint.memory.gpus import Gpu, find_gpu, gpu_catalog, gpu_from_memory
from trainlint.memory.terms import MODEL_STATE_TERMS, MemoryTerm

__all__ = [
    "MODEL_STATE_TERMS", "BatchSplit", "Gpu", "JobMemoryEstimate", "MemoryTerm", "ModelSpec", "Suggestion",
    "estimate", "find_gpu", "find_model", "find_vision_tower", "gpu_catalog", "gpu_from_memory",
    "korthikanti_activation_bytes", "largest_fitting_batch", "longest_fitting_sequence", "lora_adapter_params",
    "model_catalog", "resolve_model", "resolve_vision", "split_keeping_product", "suggestions",
    "zero2_model_states_bytes", "zero3_model_states_bytes",
]
