"""PEFT adapter methods as a recipe or a script names them (`finetuning_type: lora`,
`adapter: qlora`, `--language-training-method lora`): the same fact as a `lora` switch."""
from __future__ import annotations

from dataclasses import replace

from trainlint.knobs import K
from trainlint.resolution.precedence import Candidates

ADAPTER_METHODS = {"lora", "qlora", "dora", "adalora", "loha", "lokr", "oft"}


def derive_adapter_method(candidates: Candidates, source_knob: str) -> None:
    """`lora` from the method the knob names, where it is written; QLoRA also means a 4-bit base
    unless the bits are set already."""
    source = candidates.winner(source_knob)
    if source is None or not isinstance(source.value, str):
        return
    method = source.value.strip().lower()
    candidates.add(K.LORA, replace(source, value=method in ADAPTER_METHODS, via=(source,),
                                   note=f"{source_knob} {source.value}"))
    if method == "qlora" and candidates.winner(K.BITS) is None:
        candidates.add(K.BITS, replace(source, value=4, via=(source,), note=f"{source_knob} {source.value}"))
