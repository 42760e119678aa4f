"""Memory model: per-GPU peak memory of a training run, with an interval, a breakdown and the
assumptions behind it; what fits; model and GPU catalogs. docs/memory-model.md documents the formulas.

Modules: `inputs` (what the estimate reads about a job), `terms` (one function per memory term),
`assembly` (the peak and its interval), `fitting` (the largest batch or longest sequence that fits),
`suggest` (changes that make a job fit), `catalog` and `gpus`."""
from __future__ import annotations

import sys
from importlib import import_module
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trainlint.memory.assembly import JobMemoryEstimate, estimate
    from trainlint.memory.catalog import (
        ModelSpec,
        find_model,
        find_vision_tower,
        model_catalog,
        resolve_model,
        resolve_vision,
    )
    from trainlint.memory.cost import job_inputs
    from trainlint.memory.fitting import (
        BatchSplit,
        largest_fitting_batch,
        longest_fitting_sequence,
        split_keeping_product,
    )
    from trainlint.memory.gpus import Gpu, find_gpu, gpu_by_key, gpu_catalog, gpu_from_memory
    from trainlint.memory.inputs import adapter_inputs_remedy
    from trainlint.memory.suggest import Suggestion, suggestions
    from trainlint.memory.terms import (
        MODEL_STATE_TERMS,
        MemoryTerm,
        korthikanti_activation_bytes,
        lora_adapter_params,
        zero2_model_states_bytes,
        zero3_model_states_bytes,
    )

# Each public name -> the module that defines it, imported on first use (PEP 562): a scan that only names
# its GPU (`find_gpu`), or finds no job, does not import the estimate, the model catalog and the
# resolution layer behind them (~40 ms).
_HOMES = {
    "JobMemoryEstimate": "assembly", "estimate": "assembly",
    "ModelSpec": "catalog", "find_model": "catalog", "find_vision_tower": "catalog", "model_catalog": "catalog",
    "resolve_model": "catalog", "resolve_vision": "catalog",
    "BatchSplit": "fitting", "largest_fitting_batch": "fitting", "longest_fitting_sequence": "fitting",
    "split_keeping_product": "fitting",
    "Gpu": "gpus", "find_gpu": "gpus", "gpu_by_key": "gpus", "gpu_catalog": "gpus", "gpu_from_memory": "gpus",
    "Suggestion": "suggest", "suggestions": "suggest",
    "job_inputs": "cost", "adapter_inputs_remedy": "inputs",
    "MODEL_STATE_TERMS": "terms", "MemoryTerm": "terms", "korthikanti_activation_bytes": "terms",
    "lora_adapter_params": "terms", "zero2_model_states_bytes": "terms", "zero3_model_states_bytes": "terms",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list:
    return sorted(set(globals()) | set(_HOMES))


class _Package(ModuleType):
    """`estimate` is both a submodule and the function the package exports. Importing the submodule binds
    its name on the package; the package keeps the function there, as when it imported it eagerly."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "estimate" and isinstance(value, ModuleType):
            value = import_module(f"{__name__}.assembly").estimate
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


__all__ = [
    "MODEL_STATE_TERMS", "BatchSplit", "Gpu", "JobMemoryEstimate", "MemoryTerm", "ModelSpec", "Suggestion",
    "estimate", "find_gpu", "find_model", "find_vision_tower", "gpu_by_key", "gpu_catalog", "gpu_from_memory",
    "korthikanti_activation_bytes", "largest_fitting_batch", "longest_fitting_sequence", "lora_adapter_params",
    "adapter_inputs_remedy", "job_inputs", "model_catalog", "resolve_model", "resolve_vision", "split_keeping_product",
    "suggestions",
    "zero2_model_states_bytes", "zero3_model_states_bytes",
]
