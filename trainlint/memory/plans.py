"""Port a job to the hardware at hand: search combinations of memory-saving changes, estimate each
combination's peak and relative speed (trainlint.memory.cost), and choose the fastest that fits.
docs/planner.md describes the search, the ranking and the cost factors.

Safe changes keep the training math (the same samples reach each optimizer step, the same model
trains): a smaller micro-batch with more accumulation, gradient checkpointing, a smaller eval batch,
ZeRO-3, optimizer and parameter offload, and the launcher's GPU count set to the machine's (with the
accumulation scaled so that the global batch is kept). Unsafe ones change what trains or on what:
fp16 instead of bf16 on a GPU without bf16, LoRA instead of a full fine-tune, a shorter length limit,
fewer image tiles, an 8-bit optimizer."""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from trainlint.core import Setting, SourceKind, TrainingRun, Value
from trainlint.knobs import K
from trainlint.memory.assembly import JobMemoryEstimate, estimate, model_identified
from trainlint.memory.cost import RelativeSpeeds, job_inputs
from trainlint.memory.gpus import Gpu, gpu_catalog
from trainlint.memory.inputs import KnobReader, offloaded, out_of_scope
from trainlint.resolution.world import count_devices as count_device_list

# How many plans besides the chosen one a report lists.
RUNNERS_UP = 3
# Micro-batches tried: the divisors of per-device × accumulation up to the current one, at most this many
# (the largest ones, and always 1).
MICRO_BATCH_CANDIDATES = 8
EIGHT_BIT_OPTIMIZER = "adamw_bnb_8bit"
SHORTEST_PLANNED_LENGTH = 512


class ChangeKind(str, Enum):
    MICRO_BATCH = "micro-batch"
    EVAL_BATCH = "eval-batch"
    CHECKPOINTING = "gradient-checkpointing"
    ZERO3 = "zero-3"
    OFFLOAD_OPTIMIZER = "offload-optimizer"
    OFFLOAD_PARAMETERS = "offload-parameters"
    GPU_COUNT = "gpu-count"
    # The launcher's GPU count set to the machine's when no accumulation can keep the global batch (it is
    # not known): the batch each optimizer step sees changes with the count.
    GPU_COUNT_NEW_GLOBAL_BATCH = "gpu-count-new-global-batch"
    FP16 = "fp16"
    LORA = "lora"
    SHORTER_SEQUENCE = "shorter-sequence"
    FEWER_TILES = "fewer-image-tiles"
    EIGHT_BIT_OPTIMIZER = "8bit-optimizer"


SAFE_KINDS = frozenset({ChangeKind.MICRO_BATCH, ChangeKind.EVAL_BATCH, ChangeKind.CHECKPOINTING, ChangeKind.ZERO3,
                        ChangeKind.OFFLOAD_OPTIMIZER, ChangeKind.OFFLOAD_PARAMETERS, ChangeKind.GPU_COUNT})


@dataclass(frozen=True)
class PlanStep:
    """One change of a plan: what it is, in words, and the knob values it sets."""

    kind: ChangeKind
    description: str
    overrides: Mapping[str, Value]

    @property
    def safe(self) -> bool:
        return self.kind in SAFE_KINDS


@dataclass(frozen=True)
class Plan:
    """A combination of changes with its estimate on the target GPU and its speed relative to the recipe
    as written (were memory no limit)."""

    steps: Tuple[PlanStep, ...]
    estimate: JobMemoryEstimate
    relative_speed: float

    @property
    def overrides(self) -> Dict[str, Value]:
        out: Dict[str, Value] = {}
        for step in self.steps:
            out.update(step.overrides)
        return out

    @property
    def safe(self) -> bool:
        return all(step.safe for step in self.steps)

    @property
    def fits(self) -> bool:
        return self.estimate.fits

    def summary(self) -> str:
        return "; ".join(step.description for step in self.steps) or "no change"


@dataclass(frozen=True)
class PortPlan:
    """What it takes to run one job on `num_gpus` × `gpu`: the chosen plan (None when the job fits as
    written or nothing fits), the runners-up, the best plan when nothing fits, and the smallest catalog
    GPU that would run the job as written and with the best plan."""

    run_id: str
    gpu: str
    num_gpus: Optional[int]
    current: JobMemoryEstimate
    chosen: Optional[Plan]
    runners_up: Tuple[Plan, ...] = ()
    best_effort: Optional[Plan] = None
    global_batch: Optional[int] = None
    notes: Tuple[str, ...] = ()
    smallest_gpu_as_written: str = ""
    smallest_gpu_with_plan: str = ""

    @property
    def needed(self) -> bool:
        return self.chosen is not None or self.best_effort is not None


@dataclass
class _Axes:
    """The values each change may take for one job; the first of each is 'as written'."""

    micro: List[Tuple[int, int]] = field(default_factory=list)  # (micro-batch, accumulation)
    checkpointing: List[bool] = field(default_factory=lambda: [False])
    zero3: List[bool] = field(default_factory=lambda: [False])
    offload_optimizer: List[bool] = field(default_factory=lambda: [False])
    offload_parameters: List[bool] = field(default_factory=lambda: [False])


@dataclass(frozen=True)
class LauncherCount:
    """The GPU count a launcher states, and the setting that states it: a number (`--nproc_per_node 8`,
    `GPUS_PER_NODE=8`, `num_processes: 8`) or a device list (`--include localhost:0-7`,
    `CUDA_VISIBLE_DEVICES=0,1,2,3`). `count` is the total over `nodes` nodes; `source` may state it per node
    (torchrun's `--nproc_per_node`) or whole (srun's `--ntasks`), and `node_source` states the node count."""

    count: int
    source: Setting
    devices: bool = False
    nodes: int = 1
    node_source: Optional[Setting] = None


_DEVICE_LIST = re.compile(r"^(?P<host>[^:@]*:)?(?P<slots>[0-9,\-]+)$")


def count_devices(spec: str) -> Optional[int]:
    """`0,1,2,3` -> 4, `0-7` -> 8, `localhost:0-3` -> 4; None for anything else (several hosts)."""
    match = _DEVICE_LIST.match(spec.strip())
    return count_device_list(match.group("slots")) if match is not None else None


def launcher_gpu_count(run: TrainingRun) -> Optional[LauncherCount]:
    """The GPU count the launcher itself states (not one assumed from --num-gpus), with its source."""
    setting = run.setting(K.WORLD_SIZE)
    while setting is not None and setting.kind == SourceKind.ASSUMED:
        setting = setting.via[0] if setting.via else None
    if setting is None:
        return None
    if setting.kind != SourceKind.DERIVED:
        return LauncherCount(setting.value, setting) if _is_count(setting.value) and setting.origin else None
    sources = [s for s in setting.via if s.origin is not None or s.kind == SourceKind.DERIVED]
    if not sources:
        return None
    head = sources[0]
    while head.kind == SourceKind.DERIVED and len(head.via) == 1:
        head = head.via[0]
    node_source = sources[1] if len(sources) > 1 else None
    nodes = as_count(node_source.value) if node_source is not None else 1
    if nodes is None or head.origin is None:
        return None
    value = as_count(head.value)
    if value is not None:
        # The head is a per-node count (torchrun's --nproc_per_node × --nnodes) or already the total
        # (srun's --ntasks beside its --nodes): the resolved world size says which.
        total = setting.value if _is_count(setting.value) else value * nodes
        return LauncherCount(total, head, False, nodes, node_source)
    count = count_devices(head.value) if isinstance(head.value, str) else None
    return LauncherCount(count * nodes, head, True, nodes, node_source) if count else None


def as_count(value: Value) -> Optional[int]:
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _is_count(value: Value) -> bool:
    return as_count(value) is not None


def stated_world(run: TrainingRun) -> Optional[int]:
    """The GPU count the launcher states (not one assumed from --num-gpus)."""
    stated = launcher_gpu_count(run)
    return stated.count if stated is not None else None


@dataclass
class _Start:
    """What every plan of one port starts from: the job as written, the product per-device ×
    accumulation to keep, the steps every plan takes (the machine's GPU count) and the safe plans."""

    knobs: KnobReader
    micro: int
    accumulation: Optional[int]
    product: int
    kept_global: Optional[int]
    notes: List[str]
    base: List[PlanStep]
    current: JobMemoryEstimate

    @property
    def as_written_fits(self) -> bool:
        return self.current.fits and not self.base and self.product == self.micro * (self.accumulation or 1)


def _start(run: TrainingRun, gpu: Gpu, num_gpus: Optional[int], global_batch: Optional[int]) -> Optional[_Start]:
    if not model_identified(run):
        return None
    knobs = KnobReader(run, None)
    micro = knobs.int(K.PER_DEVICE_TRAIN_BATCH_SIZE)
    if micro is None:
        return None
    accumulation = knobs.int(K.GRADIENT_ACCUMULATION_STEPS)
    written_world = stated_world(run)
    world = knobs.int(K.WORLD_SIZE)
    notes: List[str] = []
    base: List[PlanStep] = []
    machine = num_gpus or world or 1
    product, kept_global = _product_to_keep(run, micro, accumulation, written_world, machine, global_batch, notes)
    if num_gpus is not None and written_world is not None and written_world != num_gpus:
        written_global = micro * (accumulation or 1) * written_world
        if accumulation is None or kept_global != written_global:
            # Unknown accumulation, or a global batch the machine's GPUs cannot divide (2 on 8 GPUs): the count
            # change alone decides what each optimizer step sees.
            why = "the accumulation is unknown" if accumulation is None else \
                f"the global batch {written_global} is not a multiple of {num_gpus} GPUs"
            notes.append(f"{why}, so nothing keeps the global batch when the GPU count changes from "
                         f"{written_world} to {num_gpus}: that change alters the training math")
            kept_global = None
            base.append(PlanStep(ChangeKind.GPU_COUNT_NEW_GLOBAL_BATCH,
                                 f"GPU count {written_world} -> {num_gpus} (the machine's; the global batch changes)",
                                 {"world_size": num_gpus}))
        else:
            base.append(PlanStep(ChangeKind.GPU_COUNT, f"GPU count {written_world} -> {num_gpus} (the machine's)",
                                 {"world_size": num_gpus}))
    return _Start(knobs, micro, accumulation, product, kept_global, notes, base, estimate(run, gpu))


def _safe_candidates(run: TrainingRun, gpu: Gpu, start: _Start, speeds: RelativeSpeeds) -> List[Plan]:
    axes = _axes(run, start.knobs, start.micro, start.accumulation, start.product)
    return _safe_plans(run, gpu, start.base, axes, start.micro, start.accumulation, start.knobs, speeds)


def _with_unsafe(run: TrainingRun, gpu: Gpu, start: _Start, safe: List[Plan], speeds: RelativeSpeeds) -> List[Plan]:
    candidates = safe + _unsafe_plans(run, gpu, start.knobs, safe, start.current, speeds)
    if _fp16_forced(start.knobs, gpu):
        # The job cannot run in bf16 on this GPU at all: every plan switches to fp16.
        candidates = [p for p in candidates if any(step.kind == ChangeKind.FP16 for step in p.steps)]
    return candidates


def _fp16_forced(knobs: KnobReader, gpu: Gpu) -> bool:
    return bool(knobs.bool(K.BF16)) and not gpu.bf16


def plan_port(run: TrainingRun, gpu: Gpu, num_gpus: Optional[int] = None, unsafe: bool = False,
              global_batch: Optional[int] = None) -> Optional[PortPlan]:
    """The port plan of `run` onto `num_gpus` × `gpu` (None without an identified model or a readable batch)."""
    start = _start(run, gpu, num_gpus, global_batch)
    if start is None:
        return None
    notes = tuple(start.notes)
    unmodelled = out_of_scope(run)
    if unmodelled:
        notes += (f"no change is planned for memory: {unmodelled} is out of the memory model's scope",)
    if start.as_written_fits or unmodelled:
        return PortPlan(run.id, gpu.key, num_gpus, start.current, None, global_batch=start.kept_global, notes=notes)
    speeds = RelativeSpeeds(run, gpu)
    candidates = _safe_candidates(run, gpu, start, speeds)
    if unsafe:
        candidates = _with_unsafe(run, gpu, start, candidates, speeds)
    fitting = sorted((p for p in candidates if p.fits), key=_rank)
    chosen = fitting[0] if fitting else None
    best_effort = None if fitting else min(candidates, key=lambda p: p.estimate.peak_gib, default=None)
    as_written_gpu = _smallest_gpu(run, {})
    with_plan_gpu = _smallest_gpu(run, (chosen or best_effort).overrides if (chosen or best_effort) else {})
    return PortPlan(run.id, gpu.key, num_gpus, start.current, chosen, tuple(fitting[1:1 + RUNNERS_UP]), best_effort,
                    start.kept_global, notes, as_written_gpu, with_plan_gpu)


def chosen_plan(run: TrainingRun, gpu: Gpu, num_gpus: Optional[int] = None,
                global_batch: Optional[int] = None) -> Optional[Plan]:
    """The plan `plan_port(..., unsafe=True)` chooses, and only that: unsafe plans rank after every safe
    one, so they are only weighed when no safe plan fits (or the GPU forces fp16 on every plan)."""
    start = _start(run, gpu, num_gpus, global_batch)
    if start is None or start.as_written_fits or out_of_scope(run):
        return None  # out of scope: the estimate supports no change made for memory
    speeds = RelativeSpeeds(run, gpu)
    safe = _safe_candidates(run, gpu, start, speeds)
    if not _fp16_forced(start.knobs, gpu):
        fitting = sorted((p for p in safe if p.fits), key=_rank)
        if fitting:
            return fitting[0]
    fitting = sorted((p for p in _with_unsafe(run, gpu, start, safe, speeds) if p.fits), key=_rank)
    return fitting[0] if fitting else None


# How far an unsafe change moves training away from the recipe: unsafe plans are ranked by their
# largest departure first, speed second (LoRA trains another model; fp16 is forced by the GPU).
DEPARTURE = {ChangeKind.FP16: 1, ChangeKind.EIGHT_BIT_OPTIMIZER: 2, ChangeKind.FEWER_TILES: 3,
             ChangeKind.SHORTER_SEQUENCE: 4, ChangeKind.LORA: 5}


def _rank(plan: Plan) -> Tuple[int, float, int]:
    """Safe plans first; unsafe ones by how far they depart from the recipe; then the fastest; then the
    fewest changes."""
    departure = max((DEPARTURE.get(step.kind, 0) for step in plan.steps), default=0)
    return (departure, -plan.relative_speed, len(plan.steps))


def _product_to_keep(run: TrainingRun, micro: int, accumulation: Optional[int], written_world: Optional[int],
                     machine: int, global_batch: Optional[int], notes: List[str]) -> Tuple[int, Optional[int]]:
    """Per-device × accumulation on the machine, and the global batch it keeps (None: not known)."""
    product = micro * (accumulation or 1)
    if written_world is not None:
        total = product * written_world
    elif global_batch is not None:
        total = global_batch
    else:
        if accumulation is not None:
            notes.append(f"the launcher does not state its GPU count: per-device × accumulation ({product}) is kept, "
                         f"so the global batch is {product} × the number of GPUs (--global-batch B keeps B instead)")
        return product, product * machine
    if total % machine:
        if written_world is None:  # with a stated count, _start says why the count change alters the math
            notes.append(f"the global batch {total} is not a multiple of {machine} GPUs: per-device × accumulation "
                         f"{product} is kept")
        return product, product * machine
    return total // machine, total


def _divisors_up_to(product: int, largest: int) -> List[int]:
    found = [d for d in range(min(product, largest), 0, -1) if product % d == 0]
    kept = found[:MICRO_BATCH_CANDIDATES - 1]
    return kept + ([1] if 1 not in kept else [])


def _axes(run: TrainingRun, knobs: KnobReader, micro: int, accumulation: Optional[int], product: int) -> _Axes:
    axes = _Axes()
    if accumulation is None or run.setting(K.GLOBAL_BATCH_SIZE) is not None:
        axes.micro = [(micro, accumulation or 1)]
    else:
        axes.micro = [(m, product // m) for m in _divisors_up_to(product, micro)]
    inputs = job_inputs(run)
    # A LoRA job whose frozen layers' inputs never require grad fails its first backward once checkpointing is on.
    if inputs is not None and not inputs.checkpointing and knobs.bool(K.GRADIENT_CHECKPOINTING) is False \
            and not inputs.checkpointing_breaks_adapters:
        axes.checkpointing = [False, True]
    zero = knobs.int(K.ZERO_STAGE)
    zero_in_config = _set_in_config(run, K.ZERO_STAGE)
    # A quantized base keeps its stage: ZeRO-3 would stop it at start-up (JobInputs.quantized_base, docs/planner.md).
    quantized = inputs is not None and inputs.quantized_base
    if zero in (0, 1, 2) and (zero_in_config or _set_by_flag(run, K.ZERO_STAGE)) and not quantized:
        axes.zero3 = [False, True]
    if zero in (1, 2, 3) and zero_in_config and not offloaded(knobs.str(K.OFFLOAD_OPTIMIZER)):
        axes.offload_optimizer = [False, True]
    if zero_in_config and not offloaded(knobs.str(K.OFFLOAD_PARAM)) and (zero == 3 or True in axes.zero3):
        axes.offload_parameters = [False, True]
    return axes


def _set_by_flag(run: TrainingRun, knob: str) -> bool:
    """A launcher flag the entry script builds its DeepSpeed config from (OpenRLHF's and DeepSpeed-Chat's
    `--zero_stage 2`): its number is rewritten where it is written."""
    setting = run.setting(knob)
    return setting is not None and setting.kind == SourceKind.LAUNCHER_FLAG and setting.origin is not None


def _set_in_config(run: TrainingRun, knob: str) -> bool:
    setting = run.setting(knob)
    return setting is not None and setting.kind == SourceKind.CONFIG_FILE and setting.origin is not None


def _safe_plans(run: TrainingRun, gpu: Gpu, base: Sequence[PlanStep], axes: _Axes, micro: int,
                accumulation: Optional[int], knobs: KnobReader, speeds: RelativeSpeeds) -> List[Plan]:
    plans = []
    zero = knobs.int(K.ZERO_STAGE)
    eval_batch = knobs.int(K.PER_DEVICE_EVAL_BATCH_SIZE)
    for (m, accum), ckpt, z3, opt, par in itertools.product(axes.micro, axes.checkpointing, axes.zero3,
                                                           axes.offload_optimizer, axes.offload_parameters):
        if par and not (z3 or zero == 3):
            continue
        steps = list(base)
        if (m, accum) != (micro, accumulation or 1):
            overrides: Dict[str, Value] = {"per_device_train_batch_size": m} if m != micro else {}
            if accum != (accumulation or 1):
                overrides[K.GRADIENT_ACCUMULATION_STEPS] = accum
            text = f"micro-batch {micro} -> {m}, " if m != micro else ""
            steps.append(PlanStep(ChangeKind.MICRO_BATCH, f"{text}gradient accumulation {accumulation or 1} -> {accum}",
                                  overrides))
            if eval_batch is not None and eval_batch > m and _eval_runs(run):
                steps.append(PlanStep(ChangeKind.EVAL_BATCH, f"eval batch {eval_batch} -> {m}",
                                      {"per_device_eval_batch_size": m}))
        if ckpt:
            steps.append(PlanStep(ChangeKind.CHECKPOINTING, "gradient checkpointing on",
                                  {"gradient_checkpointing": True}))
        if z3:
            steps.append(PlanStep(ChangeKind.ZERO3, f"ZeRO-{zero} -> ZeRO-3", {"zero_stage": 3}))
        if opt:
            steps.append(PlanStep(ChangeKind.OFFLOAD_OPTIMIZER, "optimizer states offloaded to CPU",
                                  {"offload_optimizer": "cpu"}))
        if par:
            steps.append(PlanStep(ChangeKind.OFFLOAD_PARAMETERS, "parameters offloaded to CPU",
                                  {"offload_param": "cpu"}))
        plans.append(_evaluate(run, gpu, tuple(steps), speeds))
    return plans


def _eval_runs(run: TrainingRun) -> bool:
    inputs = job_inputs(run)
    return inputs is not None and inputs.eval_runs


def _evaluate(run: TrainingRun, gpu: Gpu, steps: Tuple[PlanStep, ...], speeds: RelativeSpeeds) -> Plan:
    overrides: Dict[str, Value] = {}
    for step in steps:
        overrides.update(step.overrides)
    return Plan(steps, estimate(run, gpu, overrides), speeds.of(overrides))


def _unsafe_steps(run: TrainingRun, gpu: Gpu, knobs: KnobReader, current: JobMemoryEstimate) -> List[PlanStep]:
    steps = []
    if knobs.bool(K.BF16) and not gpu.bf16:
        steps.append(PlanStep(ChangeKind.FP16, f"bf16 -> fp16 ({gpu.name} has no bf16)", {"bf16": False, "fp16": True}))
    if knobs.bool(K.LORA) is not True and (knobs.int(K.BITS) or 16) == 16:
        steps.append(PlanStep(ChangeKind.LORA, "LoRA adapters instead of a full fine-tune", {"lora": True}))
    length = knobs.int(K.MAX_SEQ_LENGTH)
    if length and length > SHORTEST_PLANNED_LENGTH:
        shorter = max(SHORTEST_PLANNED_LENGTH, length // 2, current.image_tokens + 256)
        if shorter < length:
            steps.append(PlanStep(ChangeKind.SHORTER_SEQUENCE, f"length limit {length} -> {shorter}",
                                  {"max_seq_length": shorter}))
    tiles = knobs.int(K.IMAGE_TILES)
    if tiles and tiles > 1:
        steps.append(PlanStep(ChangeKind.FEWER_TILES, f"image tiles {tiles} -> {max(1, tiles // 2)}",
                              {"image_tiles": max(1, tiles // 2)}))
    if "8bit" not in (knobs.str(K.OPTIM) or "") and knobs.bool(K.LORA) is not True:
        steps.append(PlanStep(ChangeKind.EIGHT_BIT_OPTIMIZER, "8-bit AdamW (bitsandbytes)",
                              {"optim": EIGHT_BIT_OPTIMIZER}))
    return steps


def _unsafe_plans(run: TrainingRun, gpu: Gpu, knobs: KnobReader, safe: Sequence[Plan],
                  current: JobMemoryEstimate, speeds: RelativeSpeeds) -> List[Plan]:
    """Each unsafe change alone on top of the safe plans (a GPU without bf16 makes fp16 part of every one)."""
    unsafe = _unsafe_steps(run, gpu, knobs, current)
    forced = [step for step in unsafe if step.kind == ChangeKind.FP16]
    plans = []
    for extra in [[]] + [[step] for step in unsafe if step not in forced]:
        added = forced + extra
        if not added:
            continue
        for plan in safe:
            plans.append(_evaluate(run, gpu, plan.steps + tuple(added), speeds))
    return plans


def _smallest_gpu(run: TrainingRun, overrides: Mapping[str, Value]) -> str:
    """The catalog GPU with the least memory on which the job fits with `overrides`."""
    for candidate in sorted(gpu_catalog().values(), key=lambda g: (g.total_gib, g.key)):
        if estimate(run, candidate, overrides).fits:
            return candidate.name
    return ""
