"""Memory model: per-GPU peak memory of a training run, with an interval, a breakdown and the
assumptions behind it; model and GPU catalogs."""
from __future__ import annotations

from trainlint.memory.catalog import (
    ModelSpec,
    find_model,
    find_vision_tower,
    model_catalog,
    resolve_model,
    resolve_vision,
)
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
from trainlint.memory.gpus import Gpu, find_gpu, gpu_catalog, gpu_from_memory

__all__ = [
    "Gpu", "JobMemoryEstimate", "ModelSpec", "Suggestion", "estimate", "find_gpu", "find_model",
    "find_vision_tower", "gpu_catalog", "gpu_from_memory", "korthikanti_activation_bytes",
    "largest_fitting_batch", "lora_adapter_params", "model_catalog", "resolve_model", "resolve_vision",
    "suggestions", "zero2_model_states_bytes", "zero3_model_states_bytes",
]
