"""What a framework contributes to a job: the values it uses when nothing is written (defaults)
and the knobs it computes from others (derivations)."""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, auto
from typing import Callable, Mapping, Optional, Tuple

from trainlint.core import Launcher, Setting
from trainlint.resolution.precedence import Candidates


class Stage(Enum):
    """When a derivation runs: stages in the order listed, and within a stage in the order of the
    framework registry. Order matters because a later setting of equal precedence wins, and because
    a derivation may only fill in a knob no earlier one set (an adapter's 4 bits before a
    `load_in_8bit` switch)."""

    SEQUENCE = auto()  # the length of a training row
    ADAPTER = auto()  # the fine-tuning method: adapters and the quantisation a method implies
    QUANTISATION = auto()  # quantisation switches of the base model
    PRECISION = auto()
    ATTENTION = auto()
    SHARDING = auto()


@dataclass(frozen=True)
class DeriveContext:
    """What a derivation may know about the launch beyond the candidates."""

    launcher: Launcher
    launcher_args: Tuple[Setting, ...] = ()


Defaults = Callable[[Mapping[str, Setting], Candidates], None]
Derive = Callable[[Candidates, DeriveContext], None]


def no_defaults(written: Mapping[str, Setting], candidates: Candidates) -> None:
    """A framework whose unset knobs fall to the ones around it."""


@dataclass(frozen=True)
class Derivation:
    stage: Stage
    apply: Derive


@dataclass(frozen=True)
class Framework:
    """One framework's part in resolving a job. `defaults` adds FRAMEWORK_DEFAULT candidates given
    the keys written in the job's recipe (empty outside recipes); `derivations` add knobs computed
    from the winners of others."""

    name: str
    namespace: str  # the knob spelling of the files it reads (trainlint.knobs)
    defaults: Defaults = no_defaults
    derivations: Tuple[Derivation, ...] = ()
    launcher: Optional[Launcher] = None  # the command that runs its recipes, if it has recipes

    def derive(self, stage: Stage, candidates: Candidates, context: DeriveContext) -> None:
        for derivation in self.derivations:
            if derivation.stage == stage:
                derivation.apply(candidates, context)
