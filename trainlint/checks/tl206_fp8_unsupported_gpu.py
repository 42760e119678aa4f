from __future__ import annotations

from typing import Iterable

from trainlint.checks._conditions import known_bool
from trainlint.checks.base import CheckContext, Example, Rule
from trainlint.core import Applicability, Finding, Fix, KnobChange, Launcher, Severity, TrainingRun
from trainlint.knobs import K

_RECIPE = """base_model: meta-llama/Llama-3.2-3B
micro_batch_size: 1
gradient_accumulation_steps: 4
sequence_len: 2048
bf16: true
fp8: {fp8}
"""


class Fp8UnsupportedGpu(Rule):
    """
    ## What it does
    Reports axolotl's `fp8: true` when the target GPU, named with `--gpu`, has no fp8 matmuls: a card before
    Ada (A100, A6000, RTX 3090, V100). Ada, Hopper, Blackwell and ROCm cards are not judged.

    ## Why is this bad
    axolotl refuses the recipe before it loads the model ("fp8 requested, but fp8 is not supported on this GPU"):
    its float8 training runs on compute capability 9.0 and up, and torchao's on 8.9 and up.

    ## Example
    ```yaml
    bf16: true
    fp8: true     # on A100-80GB
    ```
    Use instead:
    ```yaml
    bf16: true
    fp8: false
    ```

    ## Fix safety
    Unsafe: the matmuls run in bf16 instead of fp8, which changes the run's numerics and speed.
    """

    code = "TL206"
    name = "fp8-unsupported-gpu"
    severity = Severity.ERROR
    summary = "axolotl's fp8 training on a GPU without fp8"
    examples = (
        Example("fp8 on A100", {"recipe.yaml": _RECIPE.format(fp8="true")}, True, ("--gpu", "a100-80gb"),
                at="recipe.yaml:6:6"),
        Example("fp8 on H100", {"recipe.yaml": _RECIPE.format(fp8="true")}, False, ("--gpu", "h100")),
        Example("fp8 off on A100", {"recipe.yaml": _RECIPE.format(fp8="false")}, False, ("--gpu", "a100-80gb")),
        Example("fp8 on a GPU not named", {"recipe.yaml": _RECIPE.format(fp8="true")}, False),
    )

    def check(self, run: TrainingRun, ctx: CheckContext) -> Iterable[Finding]:
        # Only axolotl's recipe key is read as fp8 training (trainlint.knobs); its validation is what refuses it.
        if ctx.gpu_assumed or ctx.gpu.fp8 or run.launcher != Launcher.AXOLOTL or known_bool(run, K.FP8) is not True:
            return
        message = (f"fp8 is on but {ctx.gpu.name} has no fp8 matmuls (compute capability 8.9 and up): axolotl refuses "
                   "the recipe at start-up (\"fp8 requested, but fp8 is not supported on this GPU\")")
        yield self.finding(run, message, at=run.setting(K.FP8),
                           fix=Fix(Applicability.UNSAFE, "train without fp8", (KnobChange(K.FP8, True, False),)))
