"""The memory questions rules ask, in one place: is an estimate grounded enough to act on, what does
the training step need, and how a verdict names the GPU."""
from __future__ import annotations

from typing import Dict, Optional

from trainlint.checks._conditions import known_int
from trainlint.checks.base import CheckContext
from trainlint.core import (
    DiagnosticKind,
    Fallback,
    FileKind,
    ModelSource,
    ReplacedBy,
    Severity,
    ShardingEngine,
    TrainingRun,
    Unknown,
    Value,
    file_kind,
)
from trainlint.knobs import K
from trainlint.memory import (
    MODEL_STATE_TERMS,
    Gpu,
    JobMemoryEstimate,
    MemoryTerm,
    estimate,
    largest_fitting_batch,
    longest_fitting_sequence,
    resolve_model,
)
from trainlint.resolution.frameworks.memory_features import MODEL_PARALLEL, OUT_OF_SCOPE

# The estimate's median error on published measurements is about 6%; a peak within this share of
# the capacity is too close to call, and a false alarm costs more than a miss.
OVER_CAPACITY_MARGIN = 0.10

# The memory rules judge the training step. The eval pass has rules of its own (TL103, TL107), and its
# estimated peak rests on a guessed eval-set size: a verdict on the train batch must not depend on it.
_TRAINING_STEP = {"eval_strategy": "no"}

# A GPU count standing for "as many GPUs as there may be": ZeRO's shards of the model states shrink to
# nothing, and what is left is what every GPU holds whatever the count. A verdict at this count holds
# for any count, so a launch that states none (`llamafactory-cli train`, `deepspeed` without
# --num_gpus) can still be judged on it.
ANY_WORLD = 4096

# The least any DeepSpeed or FSDP config leaves on each GPU: ZeRO-3 with the parameters and the optimizer
# offloaded to the CPU keeps only the layers being gathered (DeepSpeed's `largest_layer_memory`; FSDP keeps
# its root unit, the embeddings and output layer, gathered through the step). Activations and logits do not
# shard. A job whose DeepSpeed config cannot be read (`--deepspeed $DS_CONFIG`) is judged at it: a verdict
# there holds whatever the config says.
LEAST_SHARDING = {K.ZERO_STAGE: 3, K.OFFLOAD_OPTIMIZER: "cpu", K.OFFLOAD_PARAM: "cpu"}


# Training methods whose optimizer states or trainable share the memory model does not know.
UNMODELLED_OPTIMIZERS = (K.USE_GALORE, K.USE_APOLLO, K.USE_BADAM)


def unmodelled_training(run: TrainingRun) -> Optional[str]:
    """`use_galore`, `finetuning_type freeze`, or Megatron's tensor/pipeline parallelism: the model states
    are smaller than the estimate's by an amount trainlint cannot tell, so they support no verdict."""
    for knob in UNMODELLED_OPTIMIZERS:
        if run.known(knob) is True:
            return knob
    if run.known(K.FINETUNING_TYPE) == "freeze":
        return "finetuning_type freeze"
    out_of_scope = run.known(OUT_OF_SCOPE)  # set by a framework that knows why
    if isinstance(out_of_scope, str) and out_of_scope:
        return out_of_scope
    degree = run.value(MODEL_PARALLEL)
    if isinstance(degree, Unknown) or (isinstance(degree, int) and degree > 1):
        return "tensor/pipeline parallelism"  # Megatron splits the model itself: out of the model's scope
    return None


def cut_short(run: TrainingRun) -> bool:
    """The launch command ends early at a broken line continuation (TL304): what bash starts is the command without
    the flags after the break, a job no one meant, which supports no memory verdict."""
    return any(diagnostic.kind == DiagnosticKind.BROKEN_LINE_CONTINUATION for diagnostic in run.diagnostics)


def world_unknown_under_sharding(run: TrainingRun) -> bool:
    """ZeRO shards the model states over a GPU count the launch does not state."""
    stage = run.value(K.ZERO_STAGE)
    return not isinstance(stage, Unknown) and stage not in (0, None) and known_int(run, K.WORLD_SIZE) is None


def sharding_unknown(run: TrainingRun) -> bool:
    """Whether and how the model states are sharded cannot be read (`--deepspeed $DS_CONFIG`)."""
    return isinstance(run.value(K.ZERO_STAGE), Unknown)


def states_grounded(run: TrainingRun, any_world: bool = False, any_sharding: bool = False) -> bool:
    """Model states need the model and how ZeRO shards them: the stage and, when it shards, the
    world size. An unreadable stage (`--deepspeed $DS_CONFIG`) may well be ZeRO-3. `any_world`: a
    verdict that holds for every GPU count (judged at ANY_WORLD) does not need the world size;
    `any_sharding`: one that holds for every sharding (judged at LEAST_SHARDING) does not need the stage."""
    stage = run.value(K.ZERO_STAGE)
    if unmodelled_training(run) or cut_short(run) or (isinstance(stage, Unknown) and not any_sharding):
        return False
    if isinstance(stage, Unknown):
        model = resolve_model(run)
        return model is not None and model.resolved_by != ModelSource.NAME_SIZE
    sharded = stage not in (0, None)
    model = resolve_model(run)
    # Dimensions guessed from `14b` in a checkpoint's name may belong to another kind of model
    # altogether (a contrastive encoder, a mixture of experts): `estimate` shows them, rules do not.
    known_model = model is not None and model.resolved_by != ModelSource.NAME_SIZE
    return known_model and not (sharded and known_int(run, K.WORLD_SIZE) is None and not any_world)


def grounded(run: TrainingRun, any_world: bool = False, any_sharding: bool = False) -> bool:
    """A memory verdict needs the model states (above), the micro-batch and the sequence length;
    without them any number would rest on guesses, and a guess must never become a finding."""
    return (states_grounded(run, any_world, any_sharding) and known_int(run, K.PER_DEVICE_TRAIN_BATCH_SIZE) is not None
            and known_int(run, K.MAX_SEQ_LENGTH) is not None)


def over_capacity(estimate: JobMemoryEstimate) -> bool:
    """The estimate exceeds the GPU clearly enough to report."""
    return estimate.peak_gib > estimate.capacity_gib * (1 + OVER_CAPACITY_MARGIN)


def model_states_gib(estimate: JobMemoryEstimate) -> float:
    """What every GPU holds before a single activation."""
    return sum(estimate.breakdown.get(term, 0.0) for term in MODEL_STATE_TERMS)


def states_exceed_gpu(estimate: JobMemoryEstimate) -> bool:
    """No micro-batch can fit: the model states alone exceed the GPU (TL108's verdict)."""
    return model_states_gib(estimate) > estimate.capacity_gib


def training_estimate(run: TrainingRun, gpu: Gpu, **overrides: Value) -> JobMemoryEstimate:
    """The per-GPU peak of a training step, with `overrides` in place of the run's values. Sharded over
    a GPU count the launch does not state, the states are judged at ANY_WORLD: the least any count gives;
    sharded by a config that cannot be read, at LEAST_SHARDING (and ANY_WORLD when the count is unknown too)."""
    return estimate(run, gpu, {**training_step(run), **overrides})


def training_step(run: TrainingRun) -> Dict[str, Value]:
    """The overrides that make an estimate the training step's as the verdicts judge it: no evaluation, and the
    states at the least an unknown count or config leaves on a GPU (training_estimate). The batch and the length
    that fit are searched under the same overrides, so that a verdict and the change it names agree."""
    floor: Dict[str, Value] = dict(_TRAINING_STEP)
    if sharding_unknown(run):
        floor.update(LEAST_SHARDING)
        if known_int(run, K.WORLD_SIZE) is None:
            floor[K.WORLD_SIZE] = ANY_WORLD
    elif world_unknown_under_sharding(run):
        floor[K.WORLD_SIZE] = ANY_WORLD
    return floor


def eval_excess_gib(run: TrainingRun, gpu: Gpu) -> Optional[float]:
    """How far the eval pass peaks above the training step (GiB, 0 when it stays below), without the predictions
    gathered for metrics (TL107's, and sized by a guessed eval-set size). None when that rests on anything unknown:
    the model states with their sharding and world size, the train batch, the length, or the eval batch."""
    if not grounded(run) or (known_int(run, K.PER_DEVICE_EVAL_BATCH_SIZE) is None
                             and not run.facts.eval_uses_train_batch):
        return None
    found = estimate(run, gpu, {K.EVAL_ACCUMULATION_STEPS: 1})
    if found.rests_on_assumptions:
        return None
    return found.breakdown.get(MemoryTerm.EVAL.value, 0.0)


def fitting_batch(run: TrainingRun, gpu: Gpu, below: int) -> Optional[int]:
    """The largest micro-batch up to `below` whose training step fits, or None."""
    found = largest_fitting_batch(run, gpu, max_batch=below, overrides=training_step(run))
    return found if found is not None and found <= below else None


def on_gpu(ctx: CheckContext, estimate: JobMemoryEstimate) -> str:
    """How every memory verdict names its target: `NVIDIA A100 40GB (39.4 GiB usable)`, or
    `NVIDIA A100 80GB (79.2 GiB usable; assumed, pass --gpu)` when the user named none."""
    assumed = "; assumed, pass --gpu" if ctx.gpu_assumed else ""
    return f"{ctx.gpu.name} ({estimate.capacity_gib:.1f} GiB usable{assumed})"


def assumption_note(run: TrainingRun) -> str:
    """What a verdict rests on beyond the user's files: a world size from a variable's fallback
    (`${MLP_WORKER_GPU:-1}`, which the job's environment usually sets). Empty when the verdict
    rests on facts only."""
    notes = []
    world = run.setting(K.WORLD_SIZE)
    if run.known(K.ZERO_STAGE) in (0, None):
        world = None  # without sharding every GPU holds the same: the world size changes nothing
    for upstream in (world.chain() if world is not None else ()):
        if upstream.fallback is not None:
            notes.append(f"world size {world.value} from the {upstream.note}{_who_may_replace(upstream.fallback)}")
            break
    if world_unknown_under_sharding(run):
        notes.append("the states sharded over any number of GPUs (the launch states no GPU count; this is the "
                     "least any count leaves on each GPU)")
    if sharding_unknown(run):
        notes.append("the states sharded as far as any DeepSpeed or FSDP config can (its config cannot be read; "
                     "this is what ZeRO-3 with parameters and optimizer offloaded to the CPU leaves on each GPU)")
    if _unsharded_recipe_on_its_own(run):
        notes.append("no sharding, as the recipe reads on its own (the command that starts it may add an "
                     "accelerate FSDP or DeepSpeed config)")
    return "".join(f", with {note}" for note in notes)


def _unsharded_recipe_on_its_own(run: TrainingRun) -> bool:
    """A YAML recipe found by itself, with no DeepSpeed config of its own: `accelerate launch --config_file
    fsdp.yaml ... recipe.yaml` or `deepspeed ... recipe.yaml` may shard it, and no launcher says which."""
    zero = run.setting(K.ZERO_STAGE)
    return (file_kind(run.path) == FileKind.YAML and zero is not None and zero.engine == ShardingEngine.NONE)


def _who_may_replace(fallback: Fallback) -> str:
    """The fallback of `$1` or of an option the script parses is replaced by its caller's arguments
    (the note of an option's fallback says so itself), that of any other variable by the environment."""
    return {
        ReplacedBy.SCRIPT_OPTION: "",
        ReplacedBy.CALLER_ARGUMENT: " (the script's caller may pass another)",
        ReplacedBy.ENVIRONMENT: " (the environment may set it)",
    }[fallback.replaced_by]


def verdict_severity(ctx: CheckContext, severity: Severity, run: TrainingRun) -> Severity:
    """A memory verdict that rests on an assumption (a GPU the user did not name, a fallback world
    size) is a warning, not an error."""
    assumed = ctx.gpu_assumed or bool(assumption_note(run))
    return Severity.WARNING if assumed and severity == Severity.ERROR else severity


def fitting_length(run: TrainingRun, gpu: Gpu, batch: int, limit: int) -> Optional[int]:
    """The longest sequence (a multiple of 256 where possible) below `limit` at which a micro-batch of
    `batch` fits its training step, or None when not even the shortest proposed length does."""
    return longest_fitting_sequence(run, gpu, batch, limit, overrides=training_step(run))


# How a data-dependent verdict says so (with the longest row that fits).
PADDED_ROWS_REASON = ("rows are padded to the longest sample of their batch, so only batches holding a longer sample "
                      "overflow; packing would make every row that long")
LONG_ROWS_NOTE = "rows up to about {fits} tokens fit: " + PADDED_ROWS_REASON


def rows_fill_the_limit(run: TrainingRun) -> bool:
    """Packing fills every row to the length limit: how long the samples are no longer matters."""
    return run.known(K.PACKING) is True


def data_dependent_length(run: TrainingRun, gpu: Gpu, batch: int, current: JobMemoryEstimate) -> Optional[int]:
    """When an overflow happens only if rows are long: the longest row (below the limit) at which a micro-batch
    of `batch` fits. Rows are padded to the longest sample of their batch, so whether any batch is that long is
    a property of the data, which trainlint does not read; such a verdict is a warning. None when the overflow
    does not depend on the data: packing fills every row to the limit, or no shorter row fits either."""
    limit = current.sequence_tokens
    if not limit or rows_fill_the_limit(run):
        return None
    return fitting_length(run, gpu, batch, limit)
