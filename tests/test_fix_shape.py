"""One fix shape: an ordered applicability, the knob changes, the edits and the isolation rule on the fix."""
from __future__ import annotations

from trainlint.core import Applicability, Edit, Finding, Fix, Isolation, KnobChange, Origin, Severity
from trainlint.fixers.engine import choose
from trainlint.fixers.planner import PlannedFix

SAFE, UNSAFE, DISPLAY_ONLY = Applicability.SAFE, Applicability.UNSAFE, Applicability.DISPLAY_ONLY


def test_applicability_is_ordered_by_rank_not_by_its_string():
    assert DISPLAY_ONLY < UNSAFE < SAFE
    assert sorted([SAFE, DISPLAY_ONLY, UNSAFE]) == [DISPLAY_ONLY, UNSAFE, SAFE]
    assert max([UNSAFE, SAFE, DISPLAY_ONLY]) is SAFE
    assert "safe" < "unsafe" and SAFE > UNSAFE  # the values alone would order them the other way
    assert SAFE == "safe" and SAFE.value == "safe"


def test_a_fix_that_changes_knobs_is_isolated_per_job_and_a_text_repair_is_not():
    assert Fix(SAFE, "m", (KnobChange("bf16", False, True),)).isolation == Isolation.JOB
    assert Fix(UNSAFE, "m", edits=(Edit(_origin(0, 1), "\\"),)).isolation == Isolation.EDITS
    assert Fix(SAFE, "m", isolation=Isolation.JOB).isolation == Isolation.JOB


def _origin(start: int, end: int) -> Origin:
    return Origin("run.sh", 1, start + 1, 1, end + 1, start, end)


def _plan(start: int, run_id: str, isolation: Isolation) -> PlannedFix:
    edit = Edit(_origin(start, start + 1), "x")
    fix = Fix(SAFE, "m", edits=(edit,), isolation=isolation)
    finding = Finding("TL101", "n", Severity.ERROR, "m", "run.sh", _origin(start, start + 1), run_id, fix=fix)
    return PlannedFix(finding, (edit,), SAFE)


def test_one_job_isolated_fix_per_job_shares_a_round_with_any_fix_it_does_not_collide_with():
    first, second = _plan(0, "job", Isolation.JOB), _plan(4, "job", Isolation.JOB)
    other_job, repair = _plan(8, "other", Isolation.JOB), _plan(12, "job", Isolation.EDITS)
    assert choose([first, second, other_job, repair], unsafe=False) == [first, other_job, repair]
