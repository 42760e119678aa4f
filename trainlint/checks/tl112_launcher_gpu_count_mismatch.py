from __future__ import annotations

from typing import Iterable

from trainlint.checks._conditions import known_int
from trainlint.checks._examples import job
from trainlint.checks.base import CheckContext, Example, Rule
from trainlint.core import DISTRIBUTED_LAUNCHERS, Applicability, Finding, Fix, KnobChange, Severity, TrainingRun
from trainlint.knobs import K
from trainlint.memory.plans import LauncherCount, launcher_gpu_count
from trainlint.resolution.frameworks.memory_features import NO_TRAINING_STEP, NON_GPU_DEVICES


class LauncherGpuCountMismatch(Rule):
    """
    ## What it does
    Compares the GPU count the launcher states (`--nproc_per_node 8`, a `GPUS_PER_NODE=8` variable
    feeding it, `deepspeed --num_gpus 8`, `--include localhost:0-7`, `CUDA_VISIBLE_DEVICES`,
    accelerate's `num_processes`) with the machine's, given by `--num-gpus N`. Without `--num-gpus`
    it says nothing. Fewer processes than GPUs are not reported for a job that generates with vLLM
    (TRL's `--use_vllm`): TRL puts vLLM on the GPU after the training processes' (`vllm_device="auto"`), or
    a `trl vllm-serve` server runs on the others.

    ## Why is this bad
    More processes than GPUs: the job fails at start-up (`invalid device ordinal`, or the launcher
    refuses the device list). Fewer: GPUs stay idle. And a recipe ported by hand to fewer GPUs
    silently trains with a smaller global batch (per-device × accumulation × GPUs) than the one its
    learning rate was tuned for.

    ## Example
    ```sh
    GPUS_PER_NODE=8
    torchrun --nproc_per_node $GPUS_PER_NODE train.py --per_device_train_batch_size 4 \\
        --gradient_accumulation_steps 4
    ```
    On a 4-GPU machine (`trainlint fix --num-gpus 4`):
    ```sh
    GPUS_PER_NODE=4
    torchrun --nproc_per_node $GPUS_PER_NODE train.py --per_device_train_batch_size 4 \\
        --gradient_accumulation_steps 8
    ```

    ## Fix safety
    The fix is the job's port plan (`trainlint estimate --num-gpus N` shows it): the count is
    rewritten where it is stated (the variable, not the flag that reads it) and gradient
    accumulation scaled so that the global batch is kept, with whatever else the target GPU needs
    to fit. Safe. When accumulation cannot absorb the factor, a move to more GPUs shrinks the
    micro-batch instead; when neither keeps the global batch exactly (or the accumulation is unknown),
    the count change alone alters the training math: an unsafe fix. A device list grows only when it
    names the first GPUs in order (`0,1,2,3` -> `0,...,7`). A per-node count of a multi-node launch is
    left to a human.
    """

    code = "TL112"
    name = "launcher-gpu-count-mismatch"
    severity = Severity.ERROR
    summary = "The launcher starts a different number of processes than the machine has GPUs"
    examples = (
        Example("torchrun --nproc_per_node 8 on a 4-GPU machine",
                job("--per_device_train_batch_size 4\n--gradient_accumulation_steps 4",
                    launcher="torchrun --nproc_per_node 8"), True, ("--num-gpus", "4"), at="finetune.sh:2:27"),
        Example("deepspeed --include localhost:0-7 on a 4-GPU machine",
                job("--per_device_train_batch_size 4", launcher="deepspeed --include localhost:0-7"), True,
                ("--num-gpus", "4"), at="finetune.sh:2:21"),
        Example("a two-node launch of 8 GPUs each, checked against 8 GPUs, is a warning (it waits for its nodes)",
                job("--per_device_train_batch_size 4", launcher="torchrun --nnodes 2 --nproc_per_node 8"), True,
                ("--num-gpus", "8"), at="finetune.sh:2:38"),
        Example("torchrun --nproc_per_node 4 on a 4-GPU machine",
                job("--per_device_train_batch_size 4", launcher="torchrun --nproc_per_node 4"), False,
                ("--num-gpus", "4")),
        Example("one GPU left to vLLM generation (TRL's use_vllm)",
                job("--per_device_train_batch_size 4\n--use_vllm true", launcher="torchrun --nproc_per_node 7"),
                False, ("--num-gpus", "8")),
        Example("bare deepspeed uses every GPU the machine has",
                job("--per_device_train_batch_size 4", launcher="deepspeed"), False, ("--num-gpus", "4")),
    )

    def check(self, run: TrainingRun, ctx: CheckContext) -> Iterable[Finding]:
        if ctx.num_gpus is None or run.known(NON_GPU_DEVICES):
            return  # no GPU count given, or the launcher's count is of TPUs or NPUs
        stated = launcher_gpu_count(run)
        if stated is None or stated.count == ctx.num_gpus:
            return
        if stated.count > ctx.num_gpus and stated.nodes > 1:
            # A multi-node launch waits for its other nodes rather than failing: not certain, so a warning.
            per_node = stated.count // stated.nodes
            consequence = (f"it spans {stated.nodes} nodes × {per_node} GPUs, more than the {ctx.num_gpus} "
                           "GPUs given")
            severity = Severity.WARNING
        elif stated.count > ctx.num_gpus and not _certain_single_node(run, stated):
            consequence = (f"it states {stated.count} processes where {ctx.num_gpus} GPUs are given; whether that "
                           "fails depends on what the launch reaches (its nodes, or an environment that sets the "
                           "count)")
            severity = Severity.WARNING
        elif stated.count > ctx.num_gpus:
            consequence = (f"starting {stated.count} processes on {ctx.num_gpus} GPUs fails at start-up")
            severity = Severity.ERROR
        elif run.known(K.USE_VLLM) is True:
            return  # TRL generates in vLLM on the GPUs the training processes leave (the next one, or a server's)
        else:
            idle = ctx.num_gpus - stated.count
            consequence = f"{idle} of the machine's {ctx.num_gpus} GPUs {'stays' if idle == 1 else 'stay'} idle"
            severity = Severity.WARNING
        gpus = "GPU" if stated.count == 1 else "GPUs"
        message = (f"the launcher states {stated.count} {gpus}, the machine has {ctx.num_gpus} (--num-gpus): "
                   f"{consequence}; {_batch_consequence(run)} "
                   f"(`trainlint estimate --num-gpus {ctx.num_gpus}` shows the port plan)")
        yield self.finding(run, message, severity=severity, at=stated.source,
                           fix=_keeping_the_global_batch(run, stated.count, ctx.num_gpus))


def _batch_consequence(run: TrainingRun) -> str:
    """What changing the count alone does to the global batch: certain only when the micro-batch and the
    accumulation are both known, since an entry script may derive either from the world size
    (`GRADIENT_ACCUMULATION_STEPS = BATCH_SIZE // MICRO_BATCH_SIZE // world_size`); nothing, for a launch that
    takes no training step."""
    if run.known(NO_TRAINING_STEP) is True:
        return "the launch takes no training step, so the count alone may change"
    unknown = [knob for knob in (K.PER_DEVICE_TRAIN_BATCH_SIZE, K.GRADIENT_ACCUMULATION_STEPS)
               if known_int(run, knob) is None]
    if not unknown:
        return "changing the count alone changes the global batch"
    return (f"whether changing the count alone changes the global batch depends on {' and '.join(unknown)}, "
            "not known statically (an entry script may derive it from the world size)")


def _keeping_the_global_batch(run: TrainingRun, stated: int, gpus: int) -> Fix:
    """The GPU count set to `gpus` with per-device × accumulation × GPUs unchanged: gradient accumulation scaled,
    or, on more GPUs, the micro-batch shrunk when accumulation cannot absorb the factor. When neither keeps the
    global batch exactly (or a factor is not known), the count alone, which changes the global batch: unsafe."""
    world = KnobChange(K.WORLD_SIZE, stated, gpus)
    if run.known(NO_TRAINING_STEP) is True:
        return Fix(Applicability.SAFE, f"set the GPU count to {gpus} (the launch takes no training step: no global "
                                       f"batch to keep)", (world,))
    accumulation = known_int(run, K.GRADIENT_ACCUMULATION_STEPS)
    if accumulation is not None and (accumulation * stated) % gpus == 0:
        return Fix(Applicability.SAFE, f"set the GPU count to {gpus} and scale gradient accumulation to keep the "
                                       f"global batch",
                   (world, KnobChange(K.GRADIENT_ACCUMULATION_STEPS, accumulation, accumulation * stated // gpus)))
    batch = known_int(run, K.PER_DEVICE_TRAIN_BATCH_SIZE)
    if accumulation is not None and batch is not None and stated < gpus and (batch * stated) % gpus == 0:
        return Fix(Applicability.SAFE, f"set the GPU count to {gpus} and shrink the micro-batch to keep the global "
                                       f"batch", (world, KnobChange(K.PER_DEVICE_TRAIN_BATCH_SIZE, batch,
                                                                    batch * stated // gpus)))
    why = "the accumulation is unknown" if accumulation is None else \
        f"no accumulation or micro-batch keeps {stated} GPUs' global batch on {gpus}"
    return Fix(Applicability.UNSAFE, f"set the GPU count to {gpus}; the global batch changes ({why})", (world,))


def _certain_single_node(run: TrainingRun, stated: LauncherCount) -> bool:
    """Whether the count certainly starts on this one machine: a per-node launcher (not srun or mpirun, which
    spread processes over hosts), one node, and a count no environment replaces (not a `${GPUS:-16}` fallback)."""
    world = run.setting(K.WORLD_SIZE)
    chain = (*stated.source.chain(), *(world.chain() if world is not None else ()))
    return (run.launcher in DISTRIBUTED_LAUNCHERS and stated.nodes == 1
            and not any(setting.fallback is not None for setting in chain))
