"""How fast a job runs with a set of memory-saving changes, relative to the recipe as written (were memory
no limit). A deliberately small model of one optimizer step on one GPU; docs/planner.md states every
factor and where it comes from. It ranks plans; it does not predict wall-clock time.

Step time = compute (6 × parameters × tokens, at an efficiency that drops for small micro-batches, one more
forward pass when checkpointing) + the extra ZeRO-3 communication + the offload traffic over PCIe and the
CPU optimizer step (ZeRO-Offload)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional, Tuple

from trainlint.core import TrainingRun, Value
from trainlint.knobs import K
from trainlint.memory.catalog import ModelSpec, resolve_model, resolve_vision
from trainlint.memory.gpus import Gpu
from trainlint.memory.inputs import EstimateNotes, JobInputs, KnobReader, read_job_inputs, with_overrides

# Dense 16-bit tensor throughput per GPU (TFLOP/s, vendor data sheets, without sparsity). Only ratios
# between compute and PCIe/CPU time matter, so a rough figure is enough; unknown cards take DEFAULT.
PEAK_TFLOPS: Mapping[str, float] = {
    "a100-40gb": 312, "a100-80gb": 312, "a800-80gb": 312, "a800-40gb": 312, "h100-80gb": 989, "h100-nvl": 835,
    "h800-80gb": 989, "h200": 989, "v100-16gb": 125, "v100-32gb": 125, "t4": 65, "a10g": 70, "a10": 125,
    "l4": 121, "l40s": 362, "l40": 181, "a40": 150, "a6000": 155, "6000-ada": 364, "a5000": 111,
    "rtx4090": 165, "rtx3090": 71, "rtx4080": 97, "rtx3080": 60, "mi250x": 191, "mi300x": 1307,
}
DEFAULT_TFLOPS = 150
# Model FLOPs utilisation of a well-fed fine-tune (Chowdhery et al. 2022, PaLM, report 40-50% at scale;
# fine-tunes on a few GPUs sit lower).
MFU = 0.4
# Tokens in one micro-batch at which GPU efficiency is half its best: small micro-batches leave the
# matrix units under-used and pay kernel launch and optimizer-free per-step costs
# (efficiency = tokens / (tokens + HALF_EFFICIENCY_TOKENS)).
HALF_EFFICIENCY_TOKENS = 512
# Gradient checkpointing recomputes the forward pass during backward: one extra forward of three
# passes (forward + 2 × backward), about +33% compute (Chen et al. 2016, "Training Deep Nets with
# Sublinear Memory Cost"; the Hugging Face docs quote about 20% slower training).
CHECKPOINTING_COMPUTE = 4 / 3
# Share of a ZeRO-2 step spent in communication that overlap does not hide, on one node.
ZERO2_EXPOSED_COMMUNICATION = 0.1
# ZeRO-3 moves 1.5× the data of ZeRO-2 (3Ψ instead of 2Ψ per step: Rajbhandari et al. 2020, "ZeRO:
# Memory Optimizations Toward Training Trillion Parameter Models", §7.2).
ZERO3_COMMUNICATION_RATIO = 1.5
# Host-device bandwidth one GPU sees in practice over PCIe 4.0 x16 (GB/s; 32 GB/s theoretical, shared).
PCIE_GBPS = 12
# CPU Adam updates per second per GPU's shard (parameters/s): ZeRO-Offload's CPU-Adam (Ren et al. 2021,
# "ZeRO-Offload: Democratizing Billion-Scale Model Training", Table 2: about 1.5 s per 1B parameters
# on one CPU socket, shared by the GPUs of a node).
CPU_ADAM_PARAMS_PER_S = 0.7e9


@dataclass(frozen=True)
class StepTime:
    """Seconds of one optimizer step on one GPU, by part."""

    compute: float
    communication: float
    offload: float

    @property
    def total(self) -> float:
        return self.compute + self.communication + self.offload


def job_inputs(run: TrainingRun, overrides: Optional[Mapping[str, Value]] = None) -> Optional[JobInputs]:
    """The inputs the estimate reads, with `overrides` in place (None without a known model)."""
    found = _model_and_inputs(run, KnobReader(run, overrides))
    return found[1] if found is not None else None


def _model_and_inputs(run: TrainingRun, knobs: KnobReader) -> Optional[Tuple[ModelSpec, JobInputs]]:
    overridden = with_overrides(run, knobs.overrides)
    model = resolve_model(overridden)
    if model is None:
        return None
    return model, read_job_inputs(knobs, run, model, resolve_vision(overridden, model), EstimateNotes())


def step_time(run: TrainingRun, gpu: Gpu, overrides: Optional[Mapping[str, Value]] = None) -> Optional[StepTime]:
    """One optimizer step's time on `gpu` for the per-GPU share of `samples_per_gpu` samples."""
    knobs = KnobReader(run, overrides)
    found = _model_and_inputs(run, knobs)
    if found is None:
        return None
    model, job = found
    accumulation = knobs.int("gradient_accumulation_steps") or 1
    params = model.params_b * 1e9
    micro_tokens = max(1, job.samples_per_device * job.sequences_per_sample * job.sequence)
    step_tokens = micro_tokens * accumulation
    efficiency = micro_tokens / (micro_tokens + HALF_EFFICIENCY_TOKENS)
    flops = 6 * params * step_tokens
    if job.lora or job.frozen_base:
        flops = 4 * params * step_tokens  # no weight gradients for the frozen base
    if job.checkpointing:
        flops *= CHECKPOINTING_COMPUTE
    compute = flops / (PEAK_TFLOPS.get(gpu.key, DEFAULT_TFLOPS) * 1e12 * MFU * efficiency)
    communication = 0.0
    if job.world_size > 1 and not job.lora:
        exposed = compute * ZERO2_EXPOSED_COMMUNICATION
        communication = exposed * (ZERO3_COMMUNICATION_RATIO if job.zero_stage == 3 else 1.0)
    shard = params / max(1, job.world_size) if job.zero_stage else params
    offload = 0.0
    if job.offload_optimizer and not job.lora:
        # fp16 gradients down and fp16 parameters up once per step, and the Adam update on the CPU.
        offload += 4 * shard / (PCIE_GBPS * 1e9) + shard / CPU_ADAM_PARAMS_PER_S
    if job.offload_params:
        # Every micro-batch fetches the parameter shard for forward and again for backward.
        offload += accumulation * 2 * 2 * shard / (PCIE_GBPS * 1e9)
    return StepTime(compute, communication, offload)


def relative_speed(run: TrainingRun, gpu: Gpu, overrides: Mapping[str, Value],
                   baseline: Optional[Mapping[str, Value]] = None) -> float:
    """Throughput (samples per second per GPU) with `overrides`, relative to `baseline` (the recipe as
    written when None): above 1 is faster. 1.0 when either cannot be estimated."""
    before = step_time(run, gpu, baseline)
    after = step_time(run, gpu, {**dict(baseline or {}), **dict(overrides)})
    if before is None or after is None or after.total <= 0:
        return 1.0
    before_samples = _samples_per_gpu(run, baseline)
    after_samples = _samples_per_gpu(run, {**dict(baseline or {}), **dict(overrides)})
    return round((after_samples / after.total) / (before_samples / before.total), 2)


class RelativeSpeeds:
    """`relative_speed` of one job on one GPU for many sets of overrides against the recipe as
    written, whose step time is worked out once."""

    def __init__(self, run: TrainingRun, gpu: Gpu):
        self.run, self.gpu = run, gpu
        self._before = step_time(run, gpu)
        self._before_samples = _samples_per_gpu(run, None)

    def of(self, overrides: Mapping[str, Value]) -> float:
        if self._before is None:
            return 1.0
        after = step_time(self.run, self.gpu, dict(overrides))
        if after is None or after.total <= 0:
            return 1.0
        after_samples = _samples_per_gpu(self.run, dict(overrides))
        return round((after_samples / after.total) / (self._before_samples / self._before.total), 2)


def _samples_per_gpu(run: TrainingRun, overrides: Optional[Mapping[str, Value]]) -> int:
    knobs = KnobReader(run, overrides)
    return max(1, (knobs.int(K.PER_DEVICE_TRAIN_BATCH_SIZE) or 1) * (knobs.int(K.GRADIENT_ACCUMULATION_STEPS) or 1))
