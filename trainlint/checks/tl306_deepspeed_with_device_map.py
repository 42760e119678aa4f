from __future__ import annotations

from typing import Iterable

from trainlint.checks.base import CheckContext, Example, Rule
from trainlint.core import Applicability, Finding, Fix, Severity, TrainingRun
from trainlint.knobs import K
from trainlint.resolution.frameworks.memory_features import DEVICE_MAP_GPUS

_ONE_PROCESS = ("CUDA_VISIBLE_DEVICES=0,1 \\\nswift sft \\\n    --model Qwen/Qwen2.5-7B-Instruct \\\n"
                "    --deepspeed zero2 \\\n    --max_length 2048\n")


class DeepSpeedWithDeviceMap(Rule):
    """
    ## What it does
    Reports an ms-swift training command (`swift sft|pt|rlhf`, or its entry script started by `python`) that
    runs as one process over several GPUs, with DeepSpeed. Without `NPROC_PER_NODE` (or `NNODES`) ms-swift
    starts a single process; one that sees several GPUs places the model over them (`device_map`), and ms-swift
    refuses DeepSpeed then ("DeepSpeed is not compatible with `device_map`", in every release).

    ## Why is this bad
    The job stops at start-up. The command was usually meant to train data-parallel on those GPUs and
    lost the `NPROC_PER_NODE=...` that makes ms-swift start one process per GPU. A warning: the script's caller
    may export `NPROC_PER_NODE`.

    ## Example
    ```sh
    CUDA_VISIBLE_DEVICES=0,1 \\
    swift sft --model Qwen/Qwen2.5-7B-Instruct --deepspeed zero2
    ```
    Use instead:
    ```sh
    NPROC_PER_NODE=2 \\
    CUDA_VISIBLE_DEVICES=0,1 \\
    swift sft --model Qwen/Qwen2.5-7B-Instruct --deepspeed zero2
    ```

    ## Fix safety
    Display-only: one process per GPU trains data-parallel, so the global batch (per-device × accumulation ×
    GPUs) is the one to choose; dropping `--deepspeed` keeps one process over the GPUs instead.
    """

    code = "TL306"
    name = "deepspeed-with-device-map"
    severity = Severity.WARNING
    summary = "ms-swift runs one process over several GPUs, which refuses DeepSpeed"
    examples = (
        Example("two GPUs, no NPROC_PER_NODE, a DeepSpeed preset", {"finetune.sh": _ONE_PROCESS}, True,
                at="finetune.sh:4:17"),
        Example("one process per GPU", {"finetune.sh": "NPROC_PER_NODE=2 " + _ONE_PROCESS}, False),
        Example("one GPU", {"finetune.sh": _ONE_PROCESS.replace("=0,1", "=0")}, False),
    )

    def check(self, run: TrainingRun, ctx: CheckContext) -> Iterable[Finding]:
        gpus = run.known(DEVICE_MAP_GPUS)
        deepspeed = run.setting(K.DEEPSPEED)
        if not isinstance(gpus, int) or isinstance(gpus, bool) or gpus < 2 or deepspeed is None:
            return
        if not isinstance(deepspeed.value, str) or not deepspeed.value.strip():
            return  # no DeepSpeed, or a value that cannot be read
        message = (f"one process sees the {gpus} GPUs CUDA_VISIBLE_DEVICES lists, so ms-swift places the model over "
                   f"them (device_map) and refuses `--deepspeed {deepspeed.text or deepspeed.value}`: the job stops "
                   "at start-up unless its caller exports NPROC_PER_NODE")
        fix = Fix(Applicability.DISPLAY_ONLY, f"start one process per GPU with NPROC_PER_NODE={gpus} before the "
                                              "command (the global batch then counts every GPU), or drop --deepspeed")
        yield self.finding(run, message, at=deepspeed, fix=fix)
