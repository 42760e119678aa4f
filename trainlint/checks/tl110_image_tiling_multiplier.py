from __future__ import annotations

from typing import Iterable, Optional

from trainlint.checks._conditions import is_user_set, known_int
from trainlint.checks._examples import ZERO2, job
from trainlint.checks._memory import grounded, on_gpu, over_capacity, training_estimate
from trainlint.checks.base import CheckContext, Example, Rule
from trainlint.core import Applicability, Finding, Fix, KnobChange, Severity, TrainingRun
from trainlint.knobs import K

# Image tokens are what fills the GPU when they are this share of the sequence or more.
IMAGE_SHARE_THAT_MATTERS = 0.4

_FLAGS = """
--model_name_or_path openbmb/MiniCPM-Llama3-V-2_5
--deepspeed zero2.json
--bf16 True
--tune_vision True
--per_device_train_batch_size {batch}
--gradient_checkpointing True
--model_max_length 2048
--max_slice_nums {tiles}
"""


class ImageTilingMultiplier(Rule):
    """
    ## What it does
    Reports image slicing or tiling (`max_slice_nums`, `hd_num`, `max_dynamic_patch`) that multiplies
    the vision tokens of every sample past what the GPU holds at the current micro-batch, when fewer
    tiles would fit. It stays quiet when the tile count is the model's default rather than a setting
    of the user's, when images are not what fills the GPU, and when the estimate is not grounded.

    ## Why is this bad
    Each tile is a full pass through the vision tower and adds its tokens to the language model's
    sequence: 9 slices of a high-resolution image are ten times the vision activations of one. A
    batch sized for small images runs out of memory on the first large one.

    ## Example
    ```sh
    torchrun finetune.py --per_device_train_batch_size 7 --max_slice_nums 9 --tune_vision true
    ```
    Use instead fewer slices (`--max_slice_nums 4`) or a smaller micro-batch (TL101).

    ## Fix safety
    Unsafe: fewer tiles mean each image is seen at a lower resolution; what the model learns changes.
    """

    code = "TL110"
    name = "image-tiling-multiplier"
    severity = Severity.WARNING
    summary = "Image tiling multiplies vision tokens beyond what the batch leaves room for"
    examples = (
        Example("9 slices per image at micro-batch 7", job(_FLAGS.format(batch=7, tiles=9),
                                                           extra={"zero2.json": ZERO2}), True, ("--gpu", "a800-80gb"),
                at="finetune.sh:10:22"),
        Example("9 slices per image at micro-batch 1", job(_FLAGS.format(batch=1, tiles=9),
                                                           extra={"zero2.json": ZERO2}), False, ("--gpu", "a800-80gb")),
    )

    def check(self, run: TrainingRun, ctx: CheckContext) -> Iterable[Finding]:
        tiles = known_int(run, K.IMAGE_TILES)
        if tiles is None or tiles < 2 or not is_user_set(run.setting(K.IMAGE_TILES)) or not grounded(run):
            return
        current = training_estimate(run, ctx.gpu)
        if not over_capacity(current):
            return
        image_tokens = current.image_tokens
        top_two = sorted(current.breakdown, key=lambda term: -current.breakdown[term])[:2]
        sequence = current.sequence_tokens
        if "vision" not in top_two and not (sequence and image_tokens >= IMAGE_SHARE_THAT_MATTERS * sequence):
            return  # images are not what fills the GPU
        fewer = self._fitting_tiles(run, ctx, tiles)
        if fewer is None:
            return
        vision_gib = current.breakdown.get("vision", 0.0)
        message = (f"{tiles} image tiles per sample ({image_tokens} image tokens, vision tower {vision_gib:.1f} GiB) "
                   f"put the estimate at {current.peak_gib:.1f} GiB per GPU on {on_gpu(ctx, current)}; "
                   f"{fewer} tiles fit")
        fix = Fix(Applicability.UNSAFE, f"slice images into at most {fewer} tiles",
                  (KnobChange(K.IMAGE_TILES, tiles, fewer),))
        yield self.finding(run, message, at=run.setting(K.IMAGE_TILES), fix=fix)

    @staticmethod
    def _fitting_tiles(run: TrainingRun, ctx: CheckContext, tiles: int) -> Optional[int]:
        for candidate in range(tiles - 1, 0, -1):
            if training_estimate(run, ctx.gpu, image_tiles=candidate).fits:
                return candidate
        return None
