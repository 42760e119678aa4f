from __future__ import annotations

from typing import Iterable

from trainlint.checks._examples import job
from trainlint.checks._memory import (
    MODEL_STATE_TERMS,
    assumption_note,
    model_states_gib,
    on_gpu,
    states_exceed_gpu,
    states_grounded,
    training_estimate,
    verdict_severity,
)
from trainlint.checks.base import CheckContext, Example, Rule
from trainlint.core import Applicability, Finding, Fix, Severity, TrainingRun


class ModelStatesExceedGpu(Rule):
    """
    ## What it does
    Adds up what every GPU holds before a single activation: weights, gradients and optimizer
    states, sharded by the ZeRO stage over the world size and moved to the CPU by offload. Reports a
    job where that sum alone exceeds the GPU. It stays quiet when the model or the ZeRO stage cannot
    be read, or when ZeRO shards over a world size that cannot be read.

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
    Display-only: each remedy (ZeRO-3, offload, LoRA, a smaller model) changes speed, hardware needs or
    what is trained, and needs a person's choice.
    """

    code = "TL108"
    name = "model-states-exceed-gpu"
    severity = Severity.ERROR
    summary = "Weights, gradients and optimizer states alone do not fit the GPU"
    examples = (
        Example("a 13B full fine-tune without ZeRO on 40 GB cards",
                job("--model_name_or_path lmsys/vicuna-13b-v1.5\n--bf16 True\n--per_device_train_batch_size 1\n"
                    "--model_max_length 2048", launcher="torchrun --nproc_per_node 2"), True, ("--gpu", "a100-40gb")),
        Example("a 13B full fine-tune under a DeepSpeed config the environment names (its ZeRO stage is unknown)",
                job("--deepspeed $DS_CONFIG\n--model_name_or_path lmsys/vicuna-13b-v1.5\n--bf16 True\n"
                    "--per_device_train_batch_size 1\n--model_max_length 2048"), False, ("--gpu", "a100-40gb")),
        Example("a 1.6B full fine-tune without ZeRO on 80 GB cards",
                job("--model_name_or_path stabilityai/stablelm-2-1_6b\n--bf16 True\n"
                    "--per_device_train_batch_size 1\n--model_max_length 512",
                    launcher="torchrun --nproc_per_node 2"), False, ("--gpu", "a100-80gb")),
    )

    def check(self, run: TrainingRun, ctx: CheckContext) -> Iterable[Finding]:
        if not states_grounded(run):
            return
        current = training_estimate(run, ctx.gpu)
        if not states_exceed_gpu(current):
            return
        parts = ", ".join(f"{term} {current.breakdown.get(term, 0.0):.1f}" for term in MODEL_STATE_TERMS)
        stage = run.known("zero_stage")
        sharding = f"at ZeRO stage {stage}" if stage else "without ZeRO"
        message = (f"model states need {model_states_gib(current):.1f} GiB per GPU ({parts} GiB) {sharding} on "
                   f"{on_gpu(ctx, current)}{assumption_note(run)}: no micro-batch can fit")
        fix = Fix(Applicability.DISPLAY_ONLY,
                  "shard the states with ZeRO-3, offload the optimizer to the CPU, or train LoRA adapters")
        yield self.finding(run, message, severity=verdict_severity(ctx, self.severity, run),
                           at=run.setting("model_name_or_path"), fix=fix)
