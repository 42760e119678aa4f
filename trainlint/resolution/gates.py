"""Whether the branches around a statement hold, from the launcher's flags and the arguments' defaults: each branch
read as argument tests (`Gate`) holds when any test holds (`tests_any`) or when all do, and cannot be told when a
test it needs cannot."""
from __future__ import annotations

from typing import Callable, Optional, Sequence, Tuple

from trainlint.core import Setting
from trainlint.readers.facts import Gate, Keyword

# Whether one argument test holds, and the argument's value it was told from; None when it cannot be told.
TestHolds = Callable[[Keyword], Optional[Tuple[bool, Setting]]]


def gate_holds(gate: Gate, holds: TestHolds) -> Optional[bool]:
    """True or False when the launch decides the branch, None when it cannot be told."""
    if not gate.tests:
        return None
    told = [holds(test) for test in gate.tests]
    known = [result[0] for result in told if result is not None]
    if gate.tests_any and any(known):
        return True
    if not gate.tests_any and not all(known):
        return False
    if len(known) == len(told):
        return not gate.tests_any
    return None


def skipped(gates: Sequence[Gate], holds: TestHolds) -> bool:
    """Whether the launch certainly skips a statement under `gates` (one of them certainly fails)."""
    return any(gate_holds(gate, holds) is False for gate in gates)


def untold(gates: Sequence[Gate], holds: TestHolds, ignored: Callable[[Gate], bool]) -> Optional[Gate]:
    """The first of `gates` (those `ignored` aside) that the launch does not certainly take; None when it takes
    them all."""
    return next((gate for gate in gates if not ignored(gate) and gate_holds(gate, holds) is not True), None)
