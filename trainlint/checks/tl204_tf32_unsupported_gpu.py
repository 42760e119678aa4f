from __future__ import annotations

from typing import Iterable

from trainlint.checks._conditions import known_bool
from trainlint.checks._examples import job
from trainlint.checks.base import CheckContext, Example, Rule
from trainlint.core import Applicability, Finding, Fix, KnobChange, Launcher, Severity, TrainingRun
from trainlint.knobs import K

# A script whose own option sets torch's TF32 flags, which a GPU without TF32 ignores.
_OWN_OPTION = """import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--per_device_train_batch_size", type=int, default=8)
parser.add_argument("--tf32", type=bool, default=False)
args = parser.parse_args()
torch.backends.cuda.matmul.allow_tf32 = args.tf32
loss = None
loss.backward()
"""

# Recipe frameworks that hand their `tf32` key to HF's TrainingArguments as it is.
_RECIPES_PASSING_TF32 = frozenset({Launcher.LLAMAFACTORY_CLI, Launcher.AXOLOTL})


class Tf32UnsupportedGpu(Rule):
    """
    ## What it does
    Reports `tf32` turned on for HF's TrainingArguments when the target GPU, named with `--gpu`, has no
    TF32 (V100, T4 and other cards below compute capability 8.0). A ROCm GPU is not judged.

    ## Why is this bad
    TrainingArguments refuses the job before it starts ("--tf32 requires Ampere or a newer GPU arch"), after
    bf16 has been changed to fp16 as well: LLaVA's and FastChat's A100 launchers set both.

    ## Example
    ```sh
    deepspeed train.py --fp16 True --tf32 True      # on V100-32GB
    ```
    Use instead:
    ```sh
    deepspeed train.py --fp16 True --tf32 False
    ```

    ## Fix safety
    Safe: a GPU without TF32 computes fp32 matrix products in full fp32 either way; nothing the job computes
    changes.
    """

    code = "TL204"
    name = "tf32-unsupported-gpu"
    severity = Severity.ERROR
    summary = "tf32 on a GPU without TF32, which TrainingArguments refuses"
    examples = (
        Example("tf32 on V100", job("--fp16 True\n--tf32 True"), True, ("--gpu", "v100-32gb"), at="finetune.sh:4:12",
                fixed={"finetune.sh": job("--fp16 True\n--tf32 False")["finetune.sh"]}),
        Example("tf32 off on V100", job("--fp16 True\n--tf32 False"), False, ("--gpu", "v100-32gb")),
        Example("tf32 on A100", job("--bf16 True\n--tf32 True"), False, ("--gpu", "a100-80gb")),
        Example("tf32 on a GPU not named", job("--bf16 True\n--tf32 True"), False),
        Example("a script's own --tf32 option", job("--per_device_train_batch_size 4\n--tf32 True", extra={
            "train.py": _OWN_OPTION}), False, ("--gpu", "v100-32gb")),
    )

    def check(self, run: TrainingRun, ctx: CheckContext) -> Iterable[Finding]:
        if ctx.gpu_assumed or ctx.gpu.tf32 or known_bool(run, K.TF32) is not True or not _reaches_hf_arguments(run):
            return
        message = (f"tf32 is on but {ctx.gpu.name} has no TF32: TrainingArguments stops the job at start-up "
                   "(\"--tf32 requires Ampere or a newer GPU arch\")")
        yield self.finding(run, message, at=run.setting(K.TF32),
                           fix=Fix(Applicability.SAFE, "turn TF32 off", (KnobChange(K.TF32, True, False),)))


def _reaches_hf_arguments(run: TrainingRun) -> bool:
    """Whether `tf32` is HF's own TrainingArguments field in this job: a recipe framework passes its key on, and an
    entry script's parser takes it from HF's dataclass when the script defines no option of that name itself (one
    it defines may only set torch's flags, which no GPU refuses)."""
    if run.launcher in _RECIPES_PASSING_TF32:
        return True
    accepted = run.facts.accepted_flags
    return accepted is not None and "tf32" in accepted and "tf32" not in run.facts.own_flags
