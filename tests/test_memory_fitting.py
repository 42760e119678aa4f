"""What fits: the searches over the memory model, and the one batch-split policy the memory layer's
suggestions and TL101's fix share."""
from __future__ import annotations

import pytest

from trainlint.core import RunFacts, Setting, SourceKind, TrainingRun
from trainlint.memory import (
    MemoryTerm,
    estimate,
    find_gpu,
    largest_fitting_batch,
    longest_fitting_sequence,
    split_keeping_product,
    suggestions,
)
from trainlint.memory.assembly import INTERVAL
from trainlint.memory.fitting import largest_passing
from trainlint.memory.terms import FRAGMENTATION_STATES

A100_40 = find_gpu("a100-40gb")
A100_80 = find_gpu("a100-80gb")

# MoE-LLaVA's phi-2 stage-2 recipe, and a ShareGPT4V-style 7B full fine-tune.
PHI2_LLAVA = dict(
    model_name_or_path="microsoft/phi-2", vision_tower="openai/clip-vit-large-patch14-336",
    per_device_train_batch_size=8, gradient_accumulation_steps=2, world_size=8, zero_stage=2,
    bf16=True, gradient_checkpointing=True, max_seq_length=2048, eval_strategy="no",
)
VICUNA_7B = dict(
    model_name_or_path="lmsys/vicuna-7b-v1.5", vision_tower="openai/clip-vit-large-patch14-336",
    per_device_train_batch_size=16, gradient_accumulation_steps=1, world_size=8, zero_stage=2,
    bf16=True, gradient_checkpointing=True, max_seq_length=2048,
)


def make_run(facts: RunFacts = RunFacts(), **knobs) -> TrainingRun:
    settings = {k: Setting(value=v, kind=SourceKind.ASSUMED) for k, v in knobs.items()}
    return TrainingRun(id="test", path="", launcher="deepspeed", origin=None, entry=None,
                       settings=settings, facts=facts)


@pytest.mark.parametrize("boundary", [3, 4, 5, 17, 100])
def test_largest_passing_finds_the_boundary_in_few_probes(boundary):
    probes = []

    def below_or_at(value: int) -> bool:
        probes.append(value)
        return value <= boundary

    assert largest_passing(below_or_at, 1, 100) == boundary
    assert len(probes) <= 7  # log2(100) rounded up


def test_largest_passing_is_none_when_nothing_in_the_range_passes():
    assert largest_passing(lambda value: value <= 3, 4, 50) is None
    assert largest_passing(lambda value: True, 5, 4) is None


@pytest.mark.parametrize("product,fits,micro,accumulation", [
    (16, 4, 4, 4),  # 16 x 1 on 8 GPUs -> 4 x 4
    (16, 5, 4, 4),  # 5 does not divide 16: the largest that does
    (15, 4, 3, 5),
    (7, 6, 1, 7),  # a prime product: 1 always divides it
    (64, 1, 1, 64),
])
def test_split_keeping_product_keeps_per_device_times_accumulation(product, fits, micro, accumulation):
    split = split_keeping_product(product, fits)
    assert (split.micro_batch, split.accumulation) == (micro, accumulation)
    assert split.micro_batch * split.accumulation == product


def test_largest_fitting_batch_matches_a_linear_scan():
    run = make_run(**VICUNA_7B)
    scanned = max(batch for batch in range(1, 33)
                  if estimate(run, A100_40, {"per_device_train_batch_size": batch}).fits)
    assert largest_fitting_batch(run, A100_40, max_batch=32) == scanned
    assert 1 <= scanned < 16  # the recipe's 16 does not fit a 40 GB card


def test_largest_fitting_batch_stops_at_the_ceiling_when_everything_fits():
    small = make_run(**{**PHI2_LLAVA, "per_device_train_batch_size": 1, "max_seq_length": 256})
    assert largest_fitting_batch(small, A100_80, max_batch=4) == 4


def test_longest_fitting_sequence_is_a_fitting_multiple_of_256():
    run = make_run(**VICUNA_7B)
    length = longest_fitting_sequence(run, A100_40, batch=16, limit=2048)
    assert length is not None and length % 256 == 0 and 256 <= length < 2048
    fits_at = estimate(run, A100_40, {"max_seq_length": length})
    too_long = estimate(run, A100_40, {"max_seq_length": length + 256})
    assert fits_at.fits and not too_long.fits


def test_longest_fitting_sequence_is_none_when_the_model_states_alone_overflow():
    run = make_run(**{**VICUNA_7B, "model_name_or_path": "meta-llama/Llama-2-70b-hf", "zero_stage": 0})
    assert longest_fitting_sequence(run, A100_40, batch=1, limit=2048) is None


def test_the_first_suggestion_uses_the_shared_batch_split():
    run = make_run(**PHI2_LLAVA)
    first = suggestions(run, A100_40)[0]
    fitting = largest_fitting_batch(run, A100_40, max_batch=7)
    split = split_keeping_product(16, fitting)
    assert first.overrides == {"per_device_train_batch_size": split.micro_batch,
                               "gradient_accumulation_steps": split.accumulation}
    assert first.estimate.fits and first.preserves_training


def test_breakdown_keys_are_the_memory_terms():
    # A micro-batch of 1 with an eval batch of 16 whose logits are gathered: the eval pass runs higher.
    knobs = {**VICUNA_7B, "per_device_train_batch_size": 1, "per_device_eval_batch_size": 16}
    est = estimate(make_run(**knobs, facts=RunFacts(eval_dataset=True, compute_metrics=True),
                            eval_strategy="steps"), A100_80)
    assert set(est.breakdown) <= {term.value for term in MemoryTerm}
    assert {"weights", "gradients", "optimizer", "activations", "logits", "vision", "eval", "overhead"} == set(
        est.breakdown)


def test_the_interval_widens_most_around_the_dynamic_terms():
    assert INTERVAL.model_states.high == 1 + 3 * FRAGMENTATION_STATES
    for band in (INTERVAL.model_states, INTERVAL.dynamic, INTERVAL.fixed_overhead, INTERVAL.eval_excess):
        assert band.low < 1 < band.high
    assert INTERVAL.dynamic.high - INTERVAL.dynamic.low > INTERVAL.model_states.high - INTERVAL.model_states.low
    est = estimate(make_run(**VICUNA_7B), A100_80)
    assert est.low_gib < est.peak_gib < est.high_gib
