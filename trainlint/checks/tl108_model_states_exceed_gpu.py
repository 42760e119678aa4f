from __future__ import annotations

from typing import Iterable, Optional

from trainlint.checks._conditions import known_int
from trainlint.checks._examples import ZERO2, job
from trainlint.checks._memory import (
    MODEL_STATE_TERMS,
    assumption_note,
    cut_short,
    model_states_gib,
    on_gpu,
    states_exceed_gpu,
    states_grounded,
    training_estimate,
    unmodelled_training,
    verdict_severity,
)
from trainlint.checks.base import CheckContext, Example, Rule
from trainlint.core import Applicability, Finding, Fix, ModelSource, Severity, TrainingRun, Unknown
from trainlint.knobs import K
from trainlint.memory import resolve_model
from trainlint.memory.size_from_name import StatedSize, stated_size


def _size_only_from_name(run: TrainingRun) -> Optional[StatedSize]:
    """The size the model's name states, when that is all trainlint knows of the model and the ZeRO
    stage (and world size, when it shards) are known: enough for a lower bound of the model states."""
    stage = run.value(K.ZERO_STAGE)
    if isinstance(stage, Unknown) or unmodelled_training(run) or cut_short(run):
        return None
    model = resolve_model(run)
    name = run.known(K.MODEL_NAME_OR_PATH)
    if model is None or model.resolved_by != ModelSource.NAME_SIZE or not isinstance(name, str):
        return None
    return stated_size(name)


class ModelStatesExceedGpu(Rule):
    """
    ## What it does
    Adds up what every GPU holds before a single activation: weights, gradients and optimizer
    states, sharded by the ZeRO stage over the world size and moved to the CPU by offload. Reports a
    job where that sum alone exceeds the GPU. It stays quiet when the model or the ZeRO stage cannot
    be read. When ZeRO shards over a GPU count the launch does not state, it judges what every GPU
    keeps however many there are (the 16-bit weights under ZeRO-1/2), as a warning. A model known only by the size
    in its name (`/data/models/llama-13b`) is judged on the least a model of that size can hold (90% of
    the stated size, 75% of an `8x7b` product): the verdict stands whatever the model's family.

    ## Why is this bad
    No micro-batch, however small, can make such a job fit: it fails as soon as the optimizer
    allocates its states.

    ## Example
    ```sh
    torchrun --nproc_per_node 2 train.py --model_name_or_path lmsys/vicuna-13b-v1.5 --bf16 True
    ```
    (13B with AdamW and no ZeRO: about 16 bytes per parameter on every GPU.) Use instead a ZeRO-3
    config, CPU offload of the optimizer, or LoRA.

    ## Fix safety
    `trainlint fix` applies the job's port plan when one fits (docs/planner.md): safe when it keeps what is
    trained and the global batch, unsafe when it does not (LoRA, a shorter limit). Otherwise display-only: each
    remedy (ZeRO-3, offload, LoRA, a smaller model) then needs a person's choice.
    """

    code = "TL108"
    name = "model-states-exceed-gpu"
    severity = Severity.ERROR
    summary = "Weights, gradients and optimizer states alone do not fit the GPU"
    examples = (
        Example("a 13B full fine-tune under ZeRO-2 on 24 GB cards, launched on however many GPUs the node has: "
                "every GPU keeps all 16-bit weights",
                job("--deepspeed zero2.json\n--model_name_or_path lmsys/vicuna-13b-v1.5\n--bf16 True\n"
                    "--per_device_train_batch_size 1\n--model_max_length 2048", launcher="deepspeed",
                    extra={"zero2.json": ZERO2}), True, ("--gpu", "rtx4090"), at="finetune.sh:4:26"),
        Example("a 13B full fine-tune without ZeRO on 40 GB cards",
                job("--model_name_or_path lmsys/vicuna-13b-v1.5\n--bf16 True\n--per_device_train_batch_size 1\n"
                    "--model_max_length 2048", launcher="torchrun --nproc_per_node 2"), True, ("--gpu", "a100-40gb"),
                at="finetune.sh:3:26"),
        Example("a 13B full fine-tune under a DeepSpeed config the environment names (its ZeRO stage is unknown)",
                job("--deepspeed $DS_CONFIG\n--model_name_or_path lmsys/vicuna-13b-v1.5\n--bf16 True\n"
                    "--per_device_train_batch_size 1\n--model_max_length 2048"), False, ("--gpu", "a100-40gb")),
        Example("a 1.6B full fine-tune without ZeRO on 80 GB cards",
                job("--model_name_or_path stabilityai/stablelm-2-1_6b\n--bf16 True\n"
                    "--per_device_train_batch_size 1\n--model_max_length 512",
                    launcher="torchrun --nproc_per_node 2"), False, ("--gpu", "a100-80gb")),
    )

    def check(self, run: TrainingRun, ctx: CheckContext) -> Iterable[Finding]:
        if not states_grounded(run, any_world=True):
            yield from self._check_size_from_name(run, ctx)
            return
        current = training_estimate(run, ctx.gpu)
        if not states_exceed_gpu(current):
            return
        parts = ", ".join(f"{term} {current.breakdown.get(term, 0.0):.1f}" for term in MODEL_STATE_TERMS)
        sharding = _sharding(run)
        message = (f"model states need {model_states_gib(current):.1f} GiB per GPU ({parts} GiB) {sharding} on "
                   f"{on_gpu(ctx, current)}{assumption_note(run)}: no micro-batch can fit")
        fix = Fix(Applicability.DISPLAY_ONLY,
                  "shard the states with ZeRO-3, offload the optimizer to the CPU, or train LoRA adapters")
        yield self.finding(run, message, severity=verdict_severity(ctx, self.severity, run),
                           at=run.setting(K.MODEL_NAME_OR_PATH), fix=fix)

    def _check_size_from_name(self, run: TrainingRun, ctx: CheckContext) -> Iterable[Finding]:
        stated = _size_only_from_name(run)
        if stated is None:
            return
        current = training_estimate(run, ctx.gpu)
        # The states grow with the parameter count alone; scale them down to the least plausible size.
        least = model_states_gib(current) * stated.lowest_plausible_params_b / stated.params_b
        if least <= current.capacity_gib:
            return
        sharding = _sharding(run)
        message = (f"model states need at least {least:.1f} GiB per GPU {sharding} on {on_gpu(ctx, current)}"
                   f"{assumption_note(run)}: the size {stated.text} was read from the model's name, and even "
                   f"{stated.lowest_plausible_params_b:.3g}B parameters (the least a model so named holds) leave "
                   "no room for any micro-batch")
        fix = Fix(Applicability.DISPLAY_ONLY,
                  "shard the states with ZeRO-3, offload the optimizer to the CPU, or train LoRA adapters")
        yield self.finding(run, message, severity=verdict_severity(ctx, self.severity, run),
                           at=run.setting(K.MODEL_NAME_OR_PATH), fix=fix)


def _sharding(run: TrainingRun) -> str:
    """How the states are spread: `at ZeRO stage 2 over 4 GPUs` (the count the states are sharded over, which the
    launcher states and `--num-gpus` may not), or `without ZeRO`."""
    stage = run.known(K.ZERO_STAGE)
    if not stage:
        return "without ZeRO"
    world = known_int(run, K.WORLD_SIZE)
    return f"at ZeRO stage {stage} over {world} GPU{'s' if world != 1 else ''}" if world else f"at ZeRO stage {stage}"
