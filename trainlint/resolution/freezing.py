"""Parameters frozen in code: whether a freezing statement the entry script's modules hold runs and leaves which
parameters train unknown (docs/memory-model.md §6).

A statement counts when it certainly runs, or when a branch around it cannot be told to be skipped, unless a knob
the memory model already reads explains it:
- a branch on a knob that says what trains (`if model_args.tune_mm_mlp_adapter:`, `if training_args.use_lora:`,
  `if not training_args.tune_vision:`): the memory model follows that knob;
- what it freezes is a part the memory model counts apart from the trained LLM or not at all: the vision tower
  (frozen unless a knob says it trains), the multimodal projector, a reference, teacher or reward model.
A helper that freezes whatever it is given counts for nothing (its calls are not read).
The result is the knob FROZEN_IN_CODE: True when such a statement certainly runs, Unknown when it may; its setting's
origin is the statement. TRAINS_AHEAD_OF_LLM says when that statement's condition names a projector or a vision part,
which then keeps training ahead of every layer of the LLM."""
from __future__ import annotations

import re
from typing import Optional, Tuple

from trainlint.core import Setting, SourceKind, Unknown
from trainlint.knobs import K, knob_for
from trainlint.readers.facts import Freeze
from trainlint.resolution.entry import EntryFacts
from trainlint.resolution.gates import TestHolds, gate_holds
from trainlint.resolution.precedence import Candidates

FROZEN_IN_CODE = "frozen_in_code"
# Knobs whose value already says which parameters train: a branch on one of them is what the memory model follows.
TRAINABLE_SET_KNOBS = frozenset({K.TUNE_MM_MLP_ADAPTER, K.FREEZE_BACKBONE, K.FREEZE_LLM, K.TUNE_VISION,
                                 K.FREEZE_VISION_TOWER, K.LORA, K.MM_TUNABLE_PARTS})
# The names of a multimodal model's parts ahead of its LLM: the vision tower and the projector.
_AHEAD_OF_LLM_NAMES = r"vision|visual|vit\b|vpm|clip|siglip|image|img|projector|resampler"
# What a statement freezes, when it names a part the memory model counts apart from the trained LLM (the vision
# tower, frozen unless a knob says it trains; the small projector) or not at all (another model of the job).
_EXPLAINED_TARGET = re.compile(
    _AHEAD_OF_LLM_NAMES + r"|\bref|_ref\b|reference|teacher|reward|critic|\bema\b|_ema\b|vae|text_encoder",
    re.IGNORECASE)
# True when a freeze of an unknown set is conditioned on a part that sits ahead of the LLM (Mantis's `if not any(x in
# name for x in ["multi_modal_projector"])`): what it keeps training feeds every layer of the LLM, whose activations
# all stay for the backward pass.
TRAINS_AHEAD_OF_LLM = "trains_ahead_of_llm"
_AHEAD_OF_LLM = re.compile(_AHEAD_OF_LLM_NAMES, re.IGNORECASE)


def frozen_in_code(facts: EntryFacts, holds: TestHolds, candidates: Candidates) -> None:
    """Adds FROZEN_IN_CODE for the first freezing statement that certainly runs, else the first that may."""
    maybe: Optional[Setting] = None
    first_maybe: Optional[Freeze] = None
    for module in facts.modules:
        for freeze in module.freezes:
            if explained(freeze):
                continue
            runs, reason = _runs(freeze, holds)
            if runs is False:
                continue
            note = f"`{freeze.text}` freezes parameters of `{freeze.target}`"
            if runs:
                candidates.add(FROZEN_IN_CODE, Setting(True, SourceKind.DERIVED, freeze.origin, freeze.text,
                                                       note=note))
                _ahead_of_llm(freeze, candidates)
                return
            if maybe is None:
                maybe = Setting(Unknown(reason), SourceKind.DERIVED, freeze.origin, freeze.text,
                                note=f"{note} when {reason}")
                first_maybe = freeze
    if maybe is not None and first_maybe is not None:
        candidates.add(FROZEN_IN_CODE, maybe)
        _ahead_of_llm(first_maybe, candidates)


def _ahead_of_llm(freeze: Freeze, candidates: Candidates) -> None:
    """TRAINS_AHEAD_OF_LLM when the freeze's condition names a projector or a vision part."""
    if any(_AHEAD_OF_LLM.search(gate.text) for gate in freeze.gates):
        candidates.add(TRAINS_AHEAD_OF_LLM, Setting(True, SourceKind.DERIVED, freeze.origin, freeze.text,
                                                    note="the freeze keeps a part ahead of the LLM training"))


def explained(freeze: Freeze) -> bool:
    """A knob the memory model reads says what trains, or the statement freezes a part it counts apart. A helper's
    freezing (`def _freeze_params(module):`) is left out: its callers, which the reader does not follow, decide
    what it freezes and whether it runs."""
    if freeze.helper or _EXPLAINED_TARGET.search(freeze.target):
        return True
    return any(knob_for(test.reference or test.name) in TRAINABLE_SET_KNOBS
               for gate in freeze.gates for test in gate.tests)


def _runs(freeze: Freeze, holds: TestHolds) -> Tuple[Optional[bool], str]:
    """(True: runs, False: is skipped, None: cannot be told; the condition that cannot be told)."""
    unknown = []
    for gate in freeze.gates:
        decided = gate_holds(gate, holds)
        if decided is False:
            return False, ""
        if decided is None:
            unknown.append(gate.text)
    if unknown:
        return None, f"`{unknown[0]}`"
    return True, ""
