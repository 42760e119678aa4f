"""The memory model's entry points under their original module path: the estimate itself
(`assembly`), the published formulas (`terms`), the fitting searches (`fitting`) and the
suggestions (`suggest`)."""
from __future__ import annotations

from trainlint.memory.assembly import JobMemoryEstimate, estimate
from trainlint.memory.fitting import largest_fitting_batch
from trainlint.memory.suggest import Suggestion, suggestions
from trainlint.memory.terms import (
    korthikanti_activation_bytes,
    lora_adapter_params,
    zero2_model_states_bytes,
    zero3_model_states_bytes,
)

__all__ = [
    "JobMemoryEstimate", "Suggestion", "estimate", "korthikanti_activation_bytes", "largest_fitting_batch",
    "lora_adapter_params", "suggestions", "zero2_model_states_bytes", "zero3_model_states_bytes",
]
