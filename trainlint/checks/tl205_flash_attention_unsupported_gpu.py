from __future__ import annotations

from typing import Iterable, Optional, Tuple

from trainlint.checks._examples import TRAIN_PY, job
from trainlint.checks.base import CheckContext, Example, Rule
from trainlint.core import Finding, Launcher, Setting, Severity, TrainingRun
from trainlint.knobs import K
from trainlint.readers.facts import ATTENTION_PATCH

# FastChat's train_mem.py, as LLaVA-era entry scripts copy it: the patch runs before the model is built.
_PATCHED_ENTRY = TRAIN_PY.replace("{eval_dataset}", "None").replace(
    "import transformers\n",
    "import transformers\n\nfrom llama_flash_attn_monkey_patch import replace_llama_attn_with_flash_attn\n\n"
    "replace_llama_attn_with_flash_attn()\n", 1)
_XFORMERS_ENTRY = _PATCHED_ENTRY.replace("flash_attn", "xformers_attn")
_CHOSEN_IN_CODE = TRAIN_PY.replace("{eval_dataset}", "None").replace(
    "from_pretrained(model_args.model_name_or_path)",
    'from_pretrained(model_args.model_name_or_path, attn_implementation="flash_attention_2")')


class FlashAttentionUnsupportedGpu(Rule):
    """
    ## What it does
    Reports a job that attends with FlashAttention-2 (`attn_implementation="flash_attention_2"`, or a
    `replace_<family>_attn_with_flash_attn()` patch such as FastChat's `train_mem.py` applies) when the target GPU,
    named with `--gpu`, predates Ampere (V100, T4), and one that attends with FlashAttention-3
    (`flash_attention_3`) when it predates Hopper (A100, A6000, RTX 4090). Blackwell and ROCm cards are not judged
    for FlashAttention-3.

    ## Why is this bad
    FlashAttention-2's kernels run on compute capability 8.0 and up only: the first forward pass stops with
    "FlashAttention only supports Ampere GPUs or newer". The launchers written for A100s run `train_mem.py`; on a
    V100 the same job needs SDPA, eager or xformers attention (FastChat and LLaVA ship a `train_xformers.py`).
    FlashAttention-3's kernels are built for Hopper alone (ms-swift's example of it ran on H20s): ported to an A100,
    such a job stops before its first step.

    ## Example
    ```python
    model = AutoModelForCausalLM.from_pretrained(name, attn_implementation="flash_attention_2")  # on V100-32GB
    ```
    Use instead:
    ```python
    model = AutoModelForCausalLM.from_pretrained(name, attn_implementation="sdpa")
    ```

    ## Fix safety
    No automatic fix: the kernel is chosen in the entry script's code, or by which entry script the launcher runs.
    """

    code = "TL205"
    name = "flash-attention-unsupported-gpu"
    severity = Severity.ERROR
    summary = "FlashAttention-2 on a GPU that predates Ampere, or FlashAttention-3 on one that predates Hopper"
    examples = (
        Example("a FlashAttention patch on V100", job("--fp16 True", extra={"train.py": _PATCHED_ENTRY}), True,
                ("--gpu", "v100-32gb"), at="train.py:8:1"),
        Example("attn_implementation in code on T4", job("--fp16 True", extra={"train.py": _CHOSEN_IN_CODE}), True,
                ("--gpu", "t4"), at="train.py:23:114"),
        Example("an xformers patch on V100", job("--fp16 True", extra={"train.py": _XFORMERS_ENTRY}), False,
                ("--gpu", "v100-32gb")),
        Example("a FlashAttention patch on A100", job("--bf16 True", extra={"train.py": _PATCHED_ENTRY}), False,
                ("--gpu", "a100-80gb")),
        Example("a FlashAttention patch, GPU not named", job("--fp16 True", extra={"train.py": _PATCHED_ENTRY}),
                False),
        Example("LLaMA-Factory's switch, which falls back without flash-attn", {"sft.yaml": (
            "model_name_or_path: Qwen/Qwen2.5-7B\nstage: sft\nfinetuning_type: lora\nflash_attn: fa2\n"
            "per_device_train_batch_size: 1\ncutoff_len: 1024\nfp16: true\n")}, False, ("--gpu", "v100-32gb")),
        Example("FlashAttention-3 on A100", {"config_sft.yaml": (
            "model_name_or_path: Qwen/Qwen2.5-7B\nattn_implementation: flash_attention_3\n"
            "per_device_train_batch_size: 1\nmax_seq_length: 1024\nbf16: true\n")},
                True, ("--gpu", "a100-80gb"), at="config_sft.yaml:2:22"),
        Example("FlashAttention-3 on H100", {"config_sft.yaml": (
            "model_name_or_path: Qwen/Qwen2.5-7B\nattn_implementation: flash_attention_3\n"
            "per_device_train_batch_size: 1\nmax_seq_length: 1024\nbf16: true\n")},
                False, ("--gpu", "h100")),
        Example("attn_implementation in a file of TRL arguments on V100", {"config_sft.yaml": (
            "model_name_or_path: Qwen/Qwen2.5-7B\nattn_implementation: flash_attention_2\n"
            "per_device_train_batch_size: 1\nmax_seq_length: 1024\nfp16: true\n")},
                True, ("--gpu", "v100-32gb"), at="config_sft.yaml:2:22"),
    )

    def check(self, run: TrainingRun, ctx: CheckContext) -> Iterable[Finding]:
        if ctx.gpu_assumed:
            return
        chosen = _flash_attention(run)
        if chosen is None:
            return
        setting, version = chosen
        if version == 2 and not ctx.gpu.runs_flash_attention:
            requirement = "compute capability 8.0 and up"
            consequence = "the first forward pass stops (\"FlashAttention only supports Ampere GPUs or newer\")"
        elif version == 3 and not ctx.gpu.fa3:
            requirement = "its kernels are built for Hopper GPUs, H100 to H20"
            consequence = "the job stops before its first step"
        else:
            return
        instead = "SDPA, eager or xformers attention" + (", or FlashAttention-2," if version == 3 else "")
        message = (f"`{_as_written(setting)}` attends with FlashAttention-{version}, which {ctx.gpu.name} cannot run "
                   f"({requirement}): {consequence}; use {instead} on this GPU")
        yield self.finding(run, message, at=setting)


def _flash_attention(run: TrainingRun) -> Optional[Tuple[Setting, int]]:
    """The setting that makes the job attend with FlashAttention, and its version, when one certainly does: the kernel
    named itself (`attn_implementation`, ms-swift's `attn_impl`), where it was written, or a FlashAttention patch (of
    FastChat's FlashAttention-2 era). A switch (`flash_attn: fa2`, `--use_flash_attn`) is not enough: LLaMA-Factory
    falls back to the default attention when flash-attn is not installed, and a script's own switch may do the same."""
    chosen = run.setting(K.ATTN_IMPLEMENTATION)
    version = _VERSIONS.get(chosen.value.strip()) if chosen is not None and isinstance(chosen.value, str) else None
    if chosen is not None and version is not None:
        switch = run.setting(K.FLASH_ATTENTION)
        from_switch = switch is not None and any(step is switch for step in chosen.chain())
        # axolotl turns its own `flash_attention: true` into attn_implementation (normalize_attn_implementation),
        # with no fallback.
        if not from_switch or run.launcher == Launcher.AXOLOTL:
            return (chosen.head() if chosen.origin is None else chosen), version
    patch = run.setting(K.ATTENTION_PATCH)
    match = ATTENTION_PATCH.match(patch.written_as or "") if patch is not None else None
    if match is not None and match["kernel"] == "flash":
        return patch, 2
    return None


_VERSIONS = {"flash_attention_2": 2, "flash_attention_3": 3}


def _as_written(setting: Setting) -> str:
    """`flash_attention: true`, `--attn_implementation flash_attention_2`, or the call or keyword as written."""
    if setting.written_as and setting.text and setting.written_as not in setting.text:
        separator = " " if setting.written_as.startswith("-") else ": "
        return f"{setting.written_as}{separator}{setting.text}"
    return setting.text or str(setting.value)
