"""Which written value a job uses: the order of SourceKinds, the winner of each knob and its pins.

Every place that sets a knob is a candidate; the one of highest precedence wins, and the others
stay on record (the pins) so a fix can find every place that would have to change.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Dict, List, Optional, Sequence, Tuple

from trainlint.core import Diagnostic, Setting, SourceKind
from trainlint.knobs import K, coerce

# Higher wins. Code that rewrites a setting after parsing beats everything the user passed.
PRECEDENCE = {
    SourceKind.CODE_OVERRIDE: 90,
    SourceKind.LAUNCHER_FLAG: 80,
    SourceKind.CONFIG_FILE: 70,
    SourceKind.CODE_KEYWORD: 60,
    SourceKind.DATACLASS_DEFAULT: 50,
    SourceKind.ARGPARSE_DEFAULT: 40,
    SourceKind.PARAMETER_DEFAULT: 40,
    SourceKind.ENVIRONMENT: 35,
    SourceKind.DERIVED: 30,
    SourceKind.SBATCH: 25,
    SourceKind.FRAMEWORK_DEFAULT: 10,
    SourceKind.ASSUMED: 0,
}

Winners = Dict[str, Setting]
Pins = Dict[str, Tuple[Setting, ...]]


def by_precedence(settings: Sequence[Setting]) -> List[Setting]:
    """Highest precedence first; among equals the later-written (a repeated flag) first."""
    return sorted(reversed(settings), key=lambda s: -PRECEDENCE[s.kind])


def _as_written(knob_name: str, setting: Setting) -> str:
    """The setting's name as the file spells it (`--max_length`), with the knob it stands for when that differs."""
    spelled = (setting.written_as or "").lstrip("-")
    return knob_name if not spelled or spelled == knob_name else f"{spelled} (read as {knob_name})"


@dataclass
class Candidates:
    """Every place that pins each knob, before choosing the winner. The order of `add` calls
    matters: between two settings of equal precedence the later one wins."""

    by_knob: Dict[str, List[Setting]] = field(default_factory=dict)
    diagnostics: List[Diagnostic] = field(default_factory=list)

    def add(self, knob_name: str, setting: Setting) -> None:
        coerced = coerce(knob_name, setting.value)
        if coerced.error and setting.origin is not None:
            self.diagnostics.append(Diagnostic(
                "invalid-value", f"{_as_written(knob_name, setting)} cannot take this value: {coerced.error}",
                setting.origin.path,
                setting.origin))
        if knob_name == K.EVAL_STRATEGY and isinstance(coerced.value, str):
            coerced = replace(coerced, value=coerced.value.lower().replace("intervalstrategy.", ""))
        self.by_knob.setdefault(knob_name, []).append(replace(setting, value=coerced.value))

    def winner(self, knob_name: str) -> Optional[Setting]:
        found = self.by_knob.get(knob_name)
        return by_precedence(found)[0] if found else None

    def resolve(self) -> Tuple[Winners, Pins]:
        pins = {name: tuple(by_precedence(found)) for name, found in self.by_knob.items()}
        return {name: ordered[0] for name, ordered in pins.items()}, pins
