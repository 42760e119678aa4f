"""Whether turning HF gradient checkpointing on would break a LoRA job: the job's code wraps the model with
`get_peft_model`, none of the code read makes the frozen layers' inputs require grad, and HF's Trainer turns
checkpointing on with its reentrant default (trainlint.readers.python.adapter_inputs says why that fails)."""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from trainlint.resolution.entry import EntryFacts

# HF's own Trainer classes: they turn checkpointing on through `gradient_checkpointing_enable` and nothing more.
# Other trainers (TRL's) may make the inputs require grad themselves, so no claim is made for them.
HF_TRAINERS = frozenset({"Trainer", "Seq2SeqTrainer"})


def adapters_without_input_grads(facts: Optional[EntryFacts]) -> Optional[str]:
    """The module that wraps the model in adapters, when checkpointing would break the job; else None, also
    whenever the job runs code trainlint has not read or a trainer that is not HF's."""
    if facts is None or facts.unread_call is not None or facts.own_loop_trainer is not None:
        return None
    wrapper = next((module.path for module in facts.modules if module.wraps_in_adapters), None)
    if wrapper is None or any(module.inputs_require_grad for module in facts.modules):
        return None
    return wrapper if only_hf_trainers(facts) else None


def only_hf_trainers(facts: EntryFacts) -> bool:
    """The job builds a Trainer, and every one it builds is HF's own or a class the modules read define on it."""
    calls = facts.hf_trainer_calls()
    bases = _class_bases(facts)
    return bool(calls) and all(_is_hf_trainer(call.callee.rsplit(".", 1)[-1], bases) for call in calls)


def _class_bases(facts: EntryFacts) -> Dict[str, Tuple[str, ...]]:
    found: Dict[str, Tuple[str, ...]] = {}
    for module in facts.modules:
        for name, written in module.trainer_classes:
            found.setdefault(name, tuple(base.rsplit(".", 1)[-1] for base in written))
    return found


def _is_hf_trainer(name: str, bases: Dict[str, Tuple[str, ...]]) -> bool:
    """`name` is HF's Trainer, or a class the modules read define on it alone (every base known)."""
    frontier: List[str] = [name]
    seen = set()
    while frontier:
        current = frontier.pop()
        if current in HF_TRAINERS:
            return True
        if current in seen or current not in bases:
            continue
        seen.add(current)
        frontier.extend(bases[current])
    return False
