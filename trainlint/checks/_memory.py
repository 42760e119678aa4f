"""The memory questions rules ask, in one place: is an estimate grounded enough to act on."""
from __future__ import annotations

from typing import Optional

from trainlint.checks._conditions import known_int
from trainlint.core import MemoryEstimate, Severity, TrainingRun
from trainlint.memory import estimate, largest_fitting_batch, resolve_model


def grounded(run: TrainingRun) -> bool:
    """A memory verdict needs the model, the micro-batch, the sequence length and, when ZeRO shards
    states, the world size; without them any number would rest on guesses, and a guess must never
    become a finding."""
    sharded = run.known("zero_stage") not in (0, None)
    return (resolve_model(run) is not None and known_int(run, "per_device_train_batch_size") is not None
            and known_int(run, "max_seq_length") is not None
            and not (sharded and known_int(run, "world_size") is None))


# The estimate's median error on published measurements is about 6%; a peak within this share of
# the capacity is too close to call, and a false alarm costs more than a miss.
OVER_CAPACITY_MARGIN = 0.10


def over_capacity(estimate: MemoryEstimate) -> bool:
    """The estimate exceeds the GPU clearly enough to report."""
    return estimate.peak_gib > estimate.capacity_gib * (1 + OVER_CAPACITY_MARGIN)


def estimate_for(run: TrainingRun, gpu, **overrides) -> MemoryEstimate:
    return estimate(run, gpu, overrides or None)


def fitting_batch(run: TrainingRun, gpu, below: int) -> Optional[int]:
    found = largest_fitting_batch(run, gpu, max_batch=below)
    return found if found is not None and found <= below else None


def gpu_label(ctx) -> str:
    name = getattr(ctx.gpu, "name", str(ctx.gpu))
    return f"{name} (assumed; pass --gpu)" if ctx.gpu_assumed else name


def world_note(run: TrainingRun) -> str:
    """`, with world size 1 from the default of $MLP_WORKER_GPU` when the world size rests on a
    variable's fallback: the environment the job runs in usually sets it."""
    world = run.setting("world_size")
    if world is None:
        return ""
    for upstream in world.chain():
        if upstream.note.startswith("default of "):
            return f", with world size {world.value} from the {upstream.note} (the environment may set it)"
    return ""


def verdict_severity(ctx, severity: Severity) -> Severity:
    """A memory verdict against a GPU the user did not name is a warning, not an error."""
    return Severity.WARNING if ctx.gpu_assumed and severity == Severity.ERROR else severity
