from __future__ import annotations

from typing import Iterable

from trainlint.checks._conditions import precision
from trainlint.checks._examples import TRAIN_PY, job
from trainlint.checks._memory import cut_short
from trainlint.checks.base import CheckContext, Example, Rule
from trainlint.core import Applicability, Finding, Fix, KnobChange, Severity, TrainingRun, Unknown
from trainlint.knobs import K
from trainlint.memory import resolve_model
from trainlint.memory.inputs import names_half_dtype
from trainlint.resolution.frameworks.memory_features import NO_TRAINING_STEP

# Below this size fp32 training is a deliberate and affordable choice.
LARGE_MODEL_PARAMS = 1e9


class NoMixedPrecision(Rule):
    """
    ## What it does
    Reports a model of a billion parameters or more that trains in fp32: neither bf16 nor fp16 is
    on in the launcher, the DeepSpeed config or the code, and the weights are not loaded in 16 bits.
    It stays quiet when either precision flag cannot be read, when accelerate's `mixed_precision` is
    set or left to the default config of the machine (`accelerate launch` with neither `--config_file` nor
    `--mixed_precision`), when the dtype the weights load in is computed in code (`torch_dtype=dtype`), and for models
    whose own code converts them to 16 bits when loaded (Qwen-1, ChatGLM3), and for a command a broken line
    continuation cuts short (TL304), whose precision flag may be among the ones cut off.

    ## Why is this bad
    fp32 doubles the bytes of every weight, gradient and activation compared with bf16 and runs
    on slower kernels. A 7B model's fp32 weights and gradients alone take 56 GB before any
    optimizer state.

    ## Example
    ```sh
    deepspeed train.py --model_name_or_path lmsys/vicuna-7b-v1.5 --bf16 False --tf32 False
    ```
    Use instead:
    ```sh
    deepspeed train.py --model_name_or_path lmsys/vicuna-7b-v1.5 --bf16 True
    ```

    ## Fix safety
    Unsafe: mixed precision changes the numerics of training (fp16 also needs loss scaling).
    """

    code = "TL105"
    name = "no-mixed-precision"
    severity = Severity.WARNING
    summary = "A large model trains in fp32"
    examples = (
        Example("a 7B model with --bf16 False", job("--bf16 False\n--tf32 False"), True, at="finetune.sh:3:12"),
        Example("a 7B model with --bf16 True", job("--bf16 True"), False),
        Example("weights loaded in a dtype the script computes (`torch_dtype=dtype`), with --bf16 False",
                job("--bf16 False\n--tf32 False", extra={"train.py": TRAIN_PY.replace("{eval_dataset}", "None").replace(
                    "from_pretrained(model_args.model_name_or_path)",
                    "from_pretrained(model_args.model_name_or_path, torch_dtype=dtype)").replace(
                    "    model = transformers", "    dtype = torch.float16 if training_args.fp16 else torch.float32\n"
                                                 "    model = transformers")}), False),
        Example("Qwen-7B, whose own code loads it in 16 bits, with --bf16 False",
                job("--model_name_or_path Qwen/Qwen-7B\n--bf16 False\n--tf32 False"), False),
        Example("`accelerate launch` with no config file and no --mixed_precision: the default config of the machine "
                "chooses the precision, which reaches the trainer",
                job("--tf32 False", launcher="accelerate launch --multi_gpu --num_processes 4"), False),
        Example("a comment line between the flags cuts the command short (TL304): bash starts it without `--bf16 "
                "False` and the rest, so its precision is no one's choice",
                job("--model_name_or_path lmsys/vicuna-7b-v1.5\n# the precision\n--bf16 False\n--tf32 False"), False),
        Example("`accelerate launch --mixed_precision no`: fp32 for certain",
                job("--tf32 False", launcher="accelerate launch --multi_gpu --num_processes 4 --mixed_precision no"),
                True, at="finetune.sh:2:67"),
    )

    def check(self, run: TrainingRun, ctx: CheckContext) -> Iterable[Finding]:
        if run.known(NO_TRAINING_STEP) is True:
            return  # it only predicts or evaluates: nothing trains, in fp32 or otherwise
        if cut_short(run):
            return  # the precision flag may be among those a broken continuation cut off (TL304 says so)
        bf16, fp16 = precision(run)
        if bf16 is not False or fp16 is not False:
            return
        if run.known(K.MIXED_PRECISION) in ("bf16", "fp16", "fp8") or run.known(K.FP8):
            return
        dtype = run.known(K.TORCH_DTYPE)
        if isinstance(dtype, str) and names_half_dtype(dtype) or run.known(K.LOAD_IN_4BIT) or run.known(K.LOAD_IN_8BIT):
            return
        if dtype == "auto":
            return  # the checkpoint's config.json names the dtype: a 16-bit checkpoint trains in 16 bits
        if isinstance(run.value(K.TORCH_DTYPE), Unknown):
            return  # loaded in a dtype the code computes: it may be 16 bits, and then nothing trains in fp32
        model = resolve_model(run)
        if model is None or model.params < LARGE_MODEL_PARAMS or model.half_by_default:
            return
        knob = K.BF16 if ctx.gpu.bf16 else K.FP16
        # The name as the job writes it: Qwen2.5-1.5B shares Qwen2-1.5B's catalog row, and a message naming the row
        # would name another model than the user's.
        written = run.known(K.MODEL_NAME_OR_PATH)
        name = written if isinstance(written, str) and written.strip() else model.hf_repo or model.key
        message = (f"{name} ({model.params / 1e9:.1f}B parameters) trains in fp32: "
                   f"neither bf16 nor fp16 is on, so weights, gradients and activations take twice the memory")
        fix = Fix(Applicability.UNSAFE, f"train in {knob} mixed precision", (KnobChange(knob, False, True),))
        # `--mixed_precision no` is where fp32 is chosen when the trainer's flag is left at its default.
        written = [setting for setting in (run.setting(K.BF16), run.setting(K.MIXED_PRECISION))
                   if setting is not None and setting.origin is not None]
        yield self.finding(run, message, at=written[0] if written else run.setting(K.BF16), fix=fix)
