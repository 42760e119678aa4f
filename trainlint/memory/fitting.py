"""What fits: the largest micro-batch and the longest sequence whose estimate fits a GPU, and the
micro-batch that fits while keeping per-device × accumulation (docs/memory-model.md §14).

Every search here assumes the estimate grows with the value searched, which the terms guarantee
(each is a sum of non-negative terms proportional to the tokens in a micro-batch or to the scores).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Optional

from trainlint.core import TrainingRun, Value
from trainlint.memory.assembly import estimate, model_identified
from trainlint.memory.gpus import Gpu

# docs/memory-model.md §14: proposed sequence lengths are multiples of this, and never shorter.
SEQUENCE_LENGTH_STEP = 256
SHORTEST_PROPOSED_LENGTH = 256


def largest_passing(passes: Callable[[int], bool], low: int, high: int) -> Optional[int]:
    """The largest n in [low, high] for which `passes(n)`, for a `passes` that holds up to some n and
    fails beyond it; None when it holds nowhere in the range. A bisection: about log2(high - low) calls."""
    found: Optional[int] = None
    while low <= high:
        middle = (low + high) // 2
        if passes(middle):
            found, low = middle, middle + 1
        else:
            high = middle - 1
    return found


def largest_fitting_batch(run: TrainingRun, gpu: Gpu, max_batch: int = 256,
                          overrides: Optional[Mapping[str, Value]] = None) -> Optional[int]:
    """The largest per-device train batch whose estimate fits `gpu` (None if 1 does not, or no model)."""
    base = dict(overrides or {})
    if not model_identified(run, base):
        return None

    def fits(batch: int) -> bool:
        return estimate(run, gpu, {**base, "per_device_train_batch_size": batch}).fits

    if not fits(1):
        return None
    # Double until a batch fails (most runs fit a small batch: fewer estimates than bisecting [1, max]).
    fitting, failing = 1, 1
    while failing < max_batch and fits(min(failing * 2, max_batch)):
        fitting = failing = min(failing * 2, max_batch)
        if failing == max_batch:
            return max_batch
    failing = min(failing * 2, max_batch)
    between = largest_passing(fits, fitting + 1, failing - 1)
    return between if between is not None else fitting


def longest_fitting_sequence(run: TrainingRun, gpu: Gpu, batch: int, limit: int,
                             overrides: Optional[Mapping[str, Value]] = None) -> Optional[int]:
    """The longest sequence below `limit` (a multiple of SEQUENCE_LENGTH_STEP where possible) at which a
    micro-batch of `batch` fits, or None when not even the shortest proposed length does."""
    base = dict(overrides or {})

    def fits(length: int) -> bool:
        return estimate(run, gpu, {**base, "per_device_train_batch_size": batch, "max_seq_length": length}).fits

    # A limit no longer than the shortest proposed length (alpaca-lora's 256-token `cutoff_len`) is searched from
    # half of it: whether a shorter row fits is what tells a verdict that rests on the data.
    found = largest_passing(fits, min(SHORTEST_PROPOSED_LENGTH, max(1, limit // 2)), limit - 1)
    if found is None:
        return None
    return (found // SEQUENCE_LENGTH_STEP) * SEQUENCE_LENGTH_STEP or found


@dataclass(frozen=True)
class BatchSplit:
    """A micro-batch and the gradient accumulation that keep per-device × accumulation."""

    micro_batch: int
    accumulation: int


def split_keeping_product(product: int, largest_fitting: int) -> BatchSplit:
    """The largest micro-batch up to `largest_fitting` that divides `product` (per-device × accumulation),
    with the accumulation that keeps the product; a micro-batch of 1 always divides it."""
    micro = next((candidate for candidate in range(largest_fitting, 0, -1) if product % candidate == 0), 1)
    return BatchSplit(micro, product // micro)
