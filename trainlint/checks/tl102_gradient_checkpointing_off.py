from __future__ import annotations

from typing import Iterable

from trainlint.checks._conditions import known_bool
from trainlint.checks._examples import TRAIN_PY, ZERO2, job
from trainlint.checks._memory import grounded, on_gpu, over_capacity, training_estimate
from trainlint.checks.base import CheckContext, Example, Rule
from trainlint.core import Applicability, Finding, Fix, KnobChange, Severity, TrainingRun
from trainlint.knobs import K
from trainlint.memory import adapter_inputs_remedy, job_inputs

_FLAGS = """
--deepspeed zero2.json
--bf16 True
--per_device_train_batch_size 8
--model_max_length 2048
--gradient_checkpointing {gc}
"""


# An entry script that wraps the model in LoRA adapters and never makes the frozen layers' inputs require grad.
LORA_TRAIN_PY = TRAIN_PY.replace("{eval_dataset}", "None").replace(
    "    tune_vision: bool", "    use_lora: bool = field(default=False)\n    tune_vision: bool").replace(
    "    trainer = transformers.Trainer(",
    "    if training_args.use_lora:\n        model = peft.get_peft_model(model, peft.LoraConfig(r=64))\n"
    "    trainer = transformers.Trainer(").replace("import transformers\n", "import peft\nimport transformers\n")


class GradientCheckpointingOff(Rule):
    """
    ## What it does
    Reports a job whose estimated peak does not fit the GPU, where activations are the largest term
    and gradient checkpointing is off in the launcher, the configs and the code.

    It stays quiet when checkpointing is on anywhere (`model.gradient_checkpointing_enable()` in
    code counts) or cannot be read, and when the estimate is not grounded (see TL101).

    ## Why is this bad
    Without checkpointing every layer keeps its activations for the backward pass; for long
    sequences they outweigh the model itself. Checkpointing keeps one tensor per layer and recomputes
    the rest, which usually turns an out-of-memory job into one that fits.

    ## Example
    ```sh
    deepspeed train.py --per_device_train_batch_size 8 --model_max_length 2048 --gradient_checkpointing False
    ```
    Use instead:
    ```sh
    deepspeed train.py --per_device_train_batch_size 8 --model_max_length 2048 --gradient_checkpointing True
    ```

    ## Fix safety
    Safe: the gradients are the same; each step costs about a third more compute.

    Display-only for a LoRA job whose code wraps the model with `get_peft_model` and never makes the
    frozen layers' inputs require grad (`model.enable_input_require_grads()`, peft's
    `prepare_model_for_kbit_training`, `use_reentrant=False`): HF's Trainer checkpoints reentrantly,
    so with the flag alone no layer's output requires grad and the first backward fails. The code
    change comes first, by hand.
    """

    code = "TL102"
    name = "gradient-checkpointing-off"
    severity = Severity.WARNING
    summary = "Activations dominate memory and gradient checkpointing is off"
    examples = (
        Example("checkpointing off, batch 8 × 2048 tokens on a 7B model",
                job(_FLAGS.format(gc="False"), extra={"zero2.json": ZERO2}), True, ("--gpu", "a100-80gb"),
                at="finetune.sh:7:30", fixed={"finetune.sh": job(_FLAGS.format(gc="True"))["finetune.sh"]}),
        Example("checkpointing on", job(_FLAGS.format(gc="True"), extra={"zero2.json": ZERO2}), False,
                ("--gpu", "a100-80gb")),
        # Reported, but the flag is not flipped: with no input requiring grad, the first backward would fail.
        Example("LoRA through get_peft_model with no enable_input_require_grads(): reported, fix left to a human",
                job(_FLAGS.format(gc="False") + "--use_lora True",
                    extra={"zero2.json": ZERO2, "train.py": LORA_TRAIN_PY}),
                True, ("--gpu", "a100-40gb"), at="finetune.sh:7:30"),
    )

    def check(self, run: TrainingRun, ctx: CheckContext) -> Iterable[Finding]:
        if known_bool(run, K.GRADIENT_CHECKPOINTING) is not False or not grounded(run):
            return
        if run.facts.entry_exists is not True:
            return  # an entry script not read (missing, or outside the tree) may turn checkpointing on itself
        current = training_estimate(run, ctx.gpu)
        if not over_capacity(current) or current.largest_term != "activations":
            return
        with_checkpointing = training_estimate(run, ctx.gpu, gradient_checkpointing=True)
        message = (f"gradient checkpointing is off and activations take {current.breakdown['activations']:.1f} of "
                   f"{current.peak_gib:.1f} GiB per GPU on {on_gpu(ctx, current)}; with checkpointing the "
                   f"estimate is {with_checkpointing.peak_gib:.1f} GiB")
        change = (KnobChange(K.GRADIENT_CHECKPOINTING, False, True),)
        inputs = job_inputs(run)
        wrapper = inputs.checkpointing_breaks_adapters if inputs is not None else ""
        if wrapper:
            # Flipping the flag alone would crash the job's first backward: the code change comes first, by hand.
            fix = Fix(Applicability.DISPLAY_ONLY, f"turn gradient checkpointing on once "
                                                  f"{adapter_inputs_remedy(wrapper)}", change)
        else:
            fix = Fix(Applicability.SAFE, "turn gradient checkpointing on", change)
        yield self.finding(run, message, at=run.setting(K.GRADIENT_CHECKPOINTING), fix=fix)
