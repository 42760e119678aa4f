from __future__ import annotations

from typing import Iterable

from trainlint.checks._examples import ZERO2, job
from trainlint.checks._memory import grounded, on_gpu, training_estimate
from trainlint.checks.base import CheckContext, Example, Rule
from trainlint.core import Applicability, Finding, Fix, Severity, TrainingRun, Unknown
from trainlint.knobs import K
from trainlint.memory import resolve_model, resolve_vision

# Between these shares of the GPU, whether a job fits depends on how the allocator's blocks fragment.
TIGHT_LOW, TIGHT_HIGH = 0.80, 1.10
SETTING = "expandable_segments:True"

_FLAGS = """
--deepspeed zero2.json
--bf16 True
--vision_tower openai/clip-vit-large-patch14-336
--per_device_train_batch_size {batch}
--gradient_accumulation_steps 1
--gradient_checkpointing True
--model_max_length 2048
"""


class AllocatorFragmentation(Rule):
    """
    ## What it does
    Reports a multimodal job whose estimated peak is close to the GPU's capacity (80–110%) and whose
    launcher does not set `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`. It stays quiet when the
    variable is set to a value trainlint cannot read, and when the estimate is not grounded (see TL101).

    ## Why is this bad
    Batches of images and texts of different lengths allocate blocks of ever-changing sizes. The
    caching allocator cannot reuse them and reserves new ones: "reserved but unallocated" memory
    grows until an allocation fails with gigabytes nominally free. Expandable segments let blocks
    grow in place.

    ## Example
    ```sh
    deepspeed train.py --vision_tower openai/clip-vit-large-patch14-336 ...
    ```
    Use instead:
    ```sh
    export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
    deepspeed train.py --vision_tower openai/clip-vit-large-patch14-336 ...
    ```

    ## Fix safety
    Display-only: the variable may be set by the cluster's environment, which trainlint cannot see.
    The setting itself changes no numerics.
    """

    code = "TL109"
    name = "allocator-fragmentation"
    severity = Severity.INFO
    summary = "A tight multimodal job without expandable allocator segments"
    examples = (
        Example("a LLaVA-style job near the capacity of a 40 GB card",
                job(_FLAGS.format(batch=2), extra={"zero2.json": ZERO2}), True, ("--gpu", "a100-40gb"),
                at="finetune.sh:2:1"),
        Example("the same job with the allocator setting taken from the environment",
                job(_FLAGS.format(batch=2), launcher="PYTORCH_CUDA_ALLOC_CONF=$ALLOC_CONF deepspeed --num_gpus 8",
                    extra={"zero2.json": ZERO2}), False, ("--gpu", "a100-40gb")),
        Example("the same job on an 80 GB card, with room to spare",
                job(_FLAGS.format(batch=2), extra={"zero2.json": ZERO2}), False, ("--gpu", "a100-80gb")),
    )

    def check(self, run: TrainingRun, ctx: CheckContext) -> Iterable[Finding]:
        alloc = run.value(K.ALLOC_CONF)
        if isinstance(alloc, Unknown):
            return  # set from somewhere trainlint cannot read; it may well hold the setting
        if isinstance(alloc, str) and "expandable_segments:true" in alloc.lower().replace(" ", ""):
            return
        if not grounded(run) or not _multimodal(run):
            return
        current = training_estimate(run, ctx.gpu)
        share = current.peak_gib / current.capacity_gib
        if not TIGHT_LOW <= share <= TIGHT_HIGH:
            return
        message = (f"images and texts of varying length, and the estimated peak is {share:.0%} of "
                   f"{on_gpu(ctx, current)}: fragmentation can decide whether it fits; PYTORCH_CUDA_ALLOC_CONF is "
                   f"not set to {SETTING}")
        fix = Fix(Applicability.DISPLAY_ONLY, f"export PYTORCH_CUDA_ALLOC_CONF={SETTING} before the launch")
        yield self.finding(run, message, origin=run.origin, fix=fix)


def _multimodal(run: TrainingRun) -> bool:
    """Images in the batch: a vision tower or tiles are set, or the model has a tower built in."""
    if run.known(K.VISION_TOWER) or run.known(K.IMAGE_TILES):
        return True
    model = resolve_model(run)
    return model is not None and resolve_vision(run, model) is not None
