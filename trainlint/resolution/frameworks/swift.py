"""ms-swift's training commands (`swift sft`, `swift pt`, `swift rlhf`): flags HfArgumentParser reads into
TrainingArguments and ms-swift's own argument classes, with ms-swift's defaults. Facts by release (the argument
classes: swift/llm/utils/argument.py in 2.x, swift/llm/argument/ in 3.x, swift/arguments/ in 4.x):

- The tuning method is `--sft_type` (2.x), `--train_type` (3.x, and 4.0 as an alias) or `--tuner_type` (4.x);
  LoRA unless told otherwise, except `swift pt` before 3.0, which trained the full model.
- Gradient checkpointing is on, the per-device batches are 1, LoRA's rank is 8, and multimodal models train with
  their vision tower frozen (`freeze_vit`, from 3.0; 2.x trained it).
- `--torch_dtype` (`--dtype` in 2.x) is the dtype the weights load in, and picks the mixed precision: bf16 for
  bfloat16, fp16 for float16 and float32, unless `--bf16`/`--fp16` say otherwise. Unset, it is the dtype of the
  model's config.json. The full model then trains in that dtype: no fp32 copy unless DeepSpeed keeps one.
- `--max_length` unset keeps samples up to the model's own maximum length from 3.0 (longer ones are dropped);
  2.x truncated at 2048.
- `--gradient_accumulation_steps` unset is ceil(16 / batch / processes) in 2.x and from 3.2.2; 1 in between.
- `--deepspeed` takes a preset's name (swift/llm/ds_config/, swift/config/ in 4.x), a file or inline JSON.
- From 3.5, `swift sft` computes the logits only where a label is (`use_logits_to_keep`, on by default).
- `swift rlhf` trains DPO unless `--rlhf_type` says otherwise: not described yet (see `_preference`).
- A process that sees several GPUs spreads the model over them (`device_map='auto'`, swift's `is_mp`)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Mapping, Optional, Tuple

from trainlint.core import DISTRIBUTED_LAUNCHERS, Launcher, Setting, SourceKind, Unknown, parsed_release
from trainlint.knobs import HF_BOOL_FIELDS, K, coerce_as
from trainlint.resolution.frameworks.memory_features import (
    DEVICE_MAP_GPUS,
    FUSED_LOSS,
    SEQUENCE_PARALLEL,
    add_degree,
    add_out_of_scope,
    add_switch,
    is_on,
)
from trainlint.resolution.precedence import Candidates
from trainlint.resolution.world import count_devices, swift_runs_torchrun

# A config file named as the first argument (ms-swift 4.1 on).
CONFIG_SUFFIXES = (".yaml", ".yml", ".json")
# Boolean fields (HfArgumentParser takes `--flag` bare, or `--flag true`): TrainingArguments' and ms-swift's own.
SWITCHES = HF_BOOL_FIELDS | frozenset({
    "freeze_vit", "freeze_llm", "freeze_aligner", "packing", "padding_free", "use_liger", "lazy_tokenize",
    "streaming", "use_hf", "load_from_cache_file", "use_dora", "use_galore", "use_logits_to_keep", "use_rslora",
    "vit_gradient_checkpointing", "ignore_args_error", "add_version", "create_checkpoint_symlink"})
# The flag naming the tuning method, by the releases that read it.
METHOD_FLAGS = ("tuner_type", "train_type", "sft_type")
LORA_METHODS = frozenset({"lora", "longlora", "adalora", "qlora"})
# `--rlhf_type` values that generate with the model (rollouts, a teacher): what a GPU holds then is not described.
_GENERATING = frozenset({"ppo", "grpo", "gkd"})
# `--attn_impl` as written -> the attn_implementation it selects.
_ATTENTION = {"flash_attn": "flash_attention_2", "flash_attention_2": "flash_attention_2",
              "flash_attention_3": "flash_attention_3", "sdpa": "sdpa", "eager": "eager"}
# The releases where a default changed.
_SWIFT_3 = "3.0.0"
_COMPUTED_ACCUMULATION = "3.2.2"
_LOGITS_TO_KEEP = "3.5.0"
_ZERO3_OFFLOADS_OPTIMIZER = "3.0.1"


@dataclass(frozen=True)
class Preset:
    """What a `--deepspeed` preset's JSON holds that the memory model reads. `offload_optimizer` None: it
    depends on the release (zero3_offload offloaded the parameters only up to 3.0.0)."""

    stage: int
    offload_param: bool = False
    offload_optimizer: Optional[bool] = False
    reduce_bucket_size: Optional[float] = None


PRESETS = {
    "zero0": Preset(0), "zero1": Preset(1), "zero2": Preset(2, reduce_bucket_size=2e8), "zero3": Preset(3),
    "zero2_offload": Preset(2, offload_optimizer=True, reduce_bucket_size=2e8),
    "zero3_offload": Preset(3, offload_param=True, offload_optimizer=None),
    # 2.x's names.
    "default-zero2": Preset(2, reduce_bucket_size=2e8), "default-zero3": Preset(3),
    "zero2-offload": Preset(2, offload_optimizer=True, reduce_bucket_size=2e8),
    "zero3-offload": Preset(3, offload_param=True),
}


@dataclass(frozen=True)
class SwiftCommand:
    """One `swift` training command: which one, its flags by name (underscores), the ms-swift release the
    repository pins (None: not pinned), the environment of the launch, and what starts it: the `swift` command, or
    a launcher of its own (torchrun, deepspeed, python) that runs ms-swift's entry script."""

    name: str
    written: Mapping[str, Setting]
    release: Optional[Setting] = None
    env: Mapping[str, Setting] = field(default_factory=dict)
    launcher: Launcher = Launcher.SWIFT

    def at_least(self, version: str) -> Optional[bool]:
        return _at_least(self.release, version)

    def text(self, name: str) -> Optional[str]:
        setting = self.written.get(name)
        return setting.value.strip().lower() if setting is not None and isinstance(setting.value, str) else None


# ms-swift's entry scripts, which `swift sft` runs and users also start with torchrun or deepspeed themselves
# (`torchrun --nproc_per_node 4 swift/cli/sft.py ...`, `python -m swift.cli.sft`).
_ENTRY_SCRIPT = re.compile(r"(?:^|/)swift/cli/(sft|pt|rlhf)\.py$")
_ENTRY_MODULE = re.compile(r"^swift\.cli\.(sft|pt|rlhf)$")


def command_of_entry(entry: Optional[str], is_module: bool) -> Optional[str]:
    """The `swift` command an entry script or module is (`sft` for `swift/cli/sft.py`), or None."""
    if entry is None:
        return None
    found = (_ENTRY_MODULE if is_module else _ENTRY_SCRIPT).search(entry)
    return found.group(1) if found else None


def _at_least(pin: Optional[Setting], version: str) -> Optional[bool]:
    """Whether the pinned release is `version` or later; None when no release is pinned."""
    release = parsed_release(pin.value) if pin is not None else None
    return None if release is None else release >= parsed_release(version)


def _default(candidates: Candidates, knob: str, value, note: str, via: Tuple[Setting, ...] = ()) -> None:
    candidates.add(knob, Setting(value, SourceKind.FRAMEWORK_DEFAULT, None, note=note, via=via))


def _unknown(candidates: Candidates, knob: str, reason: str, via: Tuple[Setting, ...] = ()) -> None:
    candidates.add(knob, Setting(Unknown(reason), SourceKind.FRAMEWORK_DEFAULT, None, note=reason, via=via))


def _pin(command: SwiftCommand) -> Tuple[Setting, ...]:
    return (command.release,) if command.release is not None else ()


def apply(command: SwiftCommand, candidates: Candidates) -> None:
    """ms-swift's defaults and the knobs its flags imply; the flags that name a knob are candidates already."""
    written = command.written
    _method(command, candidates)
    if "gradient_checkpointing" not in written:
        _default(candidates, K.GRADIENT_CHECKPOINTING, True, "ms-swift default")
    if "lora_rank" not in written:
        _default(candidates, K.LORA_R, 8, "ms-swift default")
    for knob, names in ((K.PER_DEVICE_TRAIN_BATCH_SIZE, ("per_device_train_batch_size", "batch_size")),
                        (K.PER_DEVICE_EVAL_BATCH_SIZE, ("per_device_eval_batch_size", "eval_batch_size"))):
        if not any(name in written for name in names):
            _default(candidates, knob, 1, "ms-swift default")
    _accumulation(command, candidates)
    _precision(command, candidates)
    _length(command, candidates)
    _attention(command, candidates)
    _vision(command, candidates)
    _logits(command, candidates)
    add_degree(candidates, SEQUENCE_PARALLEL, written, ("sequence_parallel_size",))
    if command.name == "rlhf":
        _preference(command, candidates)
    _placement(command, candidates)


def _method(command: SwiftCommand, candidates: Candidates) -> None:
    """Whether the job trains LoRA adapters; unknown, or out of scope for a method the memory model does not
    describe."""
    written = next((command.written[name] for name in METHOD_FLAGS if name in command.written), None)
    if written is not None:
        method = str(written.value).strip().lower() if isinstance(written.value, str) else None
        if method == "full" or method in LORA_METHODS:
            lora = method != "full"
            candidates.add(K.LORA, replace(written, value=lora, kind=SourceKind.DERIVED, via=(written,),
                                           note=f"{written.written_as or 'tuner_type'} {method}"))
            if method == "full":
                _full_variants(command, candidates)
        elif method is not None:
            add_out_of_scope(candidates, written, f"ms-swift's {method} tuner: the memory model describes LoRA and "
                                                  "full tuning")
        return
    if command.name == "pt" and command.at_least(_SWIFT_3) is not True:
        if command.at_least(_SWIFT_3) is False:
            _default(candidates, K.LORA, False, "`swift pt` trained the full model before ms-swift 3.0", _pin(command))
            _full_variants(command, candidates)
        else:
            _unknown(candidates, K.LORA, "`swift pt` trains LoRA adapters from ms-swift 3.0 and the full model "
                                         "before; the repository pins no release")
        return
    _default(candidates, K.LORA, True, f"ms-swift default (`swift {command.name}` trains LoRA adapters)")


def _full_variants(command: SwiftCommand, candidates: Candidates) -> None:
    """Full tuning that keeps fewer optimizer states than the model has weights: GaLore's projections, LISA's few
    active layers."""
    galore = command.written.get("use_galore")
    if is_on(galore):
        add_out_of_scope(candidates, galore, "use_galore: GaLore keeps low-rank optimizer states")
    layers = command.written.get("lisa_activated_layers")
    count = coerce_as(int, layers.value).value if layers is not None else None
    if isinstance(count, int) and not isinstance(count, bool) and count > 0:
        add_out_of_scope(candidates, layers, "lisa_activated_layers: LISA trains a few layers at a time")


def _accumulation(command: SwiftCommand, candidates: Candidates) -> None:
    """Unset, ceil(16 / per-device batch / processes) in 2.x and from 3.2.2 (TrainArgumentsMixin); 3.0 to 3.2.1
    kept TrainingArguments' 1."""
    if "gradient_accumulation_steps" in command.written:
        return
    if command.at_least(_SWIFT_3) is True and command.at_least(_COMPUTED_ACCUMULATION) is False:
        return
    batch, world = candidates.winner(K.PER_DEVICE_TRAIN_BATCH_SIZE), candidates.winner(K.WORLD_SIZE)
    sizes = [coerce_as(int, setting.value).value if setting is not None else None for setting in (batch, world)]
    formula = "ceil(16 / per-device batch / processes)"
    if command.at_least(_SWIFT_3) is None:  # no release pinned, or none that can be read
        _unknown(candidates, K.GRADIENT_ACCUMULATION_STEPS, f"ms-swift computes it as {formula} from 3.2.2 (and in "
                                                            "2.x), uses 1 from 3.0 to 3.2.1; no release is pinned")
    elif all(isinstance(size, int) and not isinstance(size, bool) and size > 0 for size in sizes):
        steps = max(1, -(-16 // (sizes[0] * sizes[1])))
        candidates.add(K.GRADIENT_ACCUMULATION_STEPS, Setting(steps, SourceKind.DERIVED, None, via=(batch, world),
                                                              note=f"ms-swift: {formula}"))
    else:
        _unknown(candidates, K.GRADIENT_ACCUMULATION_STEPS, f"ms-swift computes it as {formula}, and the batch or "
                                                            "the process count is not known")


def _precision(command: SwiftCommand, candidates: Candidates) -> None:
    """bf16 for bfloat16 weights, fp16 for float16 and float32 ones, unless `--bf16`/`--fp16` say (model_args.py
    `_init_mixed_precision`); weights in the config's dtype when `--torch_dtype` is unset."""
    written = command.written
    dtype = next((written[name] for name in ("torch_dtype", "dtype") if name in written), None)
    if dtype is None:
        reason = "ms-swift loads the weights in the dtype of the model's config.json"
        _unknown(candidates, K.TORCH_DTYPE, reason)
        if "bf16" not in written and "fp16" not in written:
            _unknown(candidates, K.BF16, f"{reason}, and trains in mixed precision of that dtype")
        return
    name = str(dtype.value).strip().lower().removeprefix("torch.") if isinstance(dtype.value, str) else None
    if name is None or "bf16" in written or "fp16" in written:
        return
    switch = {"bfloat16": K.BF16, "bf16": K.BF16, "float16": K.FP16, "fp16": K.FP16, "float32": K.FP16,
              "fp32": K.FP16}.get(name)
    if switch is not None:
        candidates.add(switch, Setting(True, SourceKind.DERIVED, None, via=(dtype,),
                                       note=f"ms-swift: torch_dtype {name} picks {switch} mixed precision"))
    else:
        _unknown(candidates, K.BF16, f"`{dtype.text or dtype.value}` leaves the dtype to the model's config.json",
                 (dtype,))


def _length(command: SwiftCommand, candidates: Candidates) -> None:
    if "max_length" in command.written:
        return
    if command.at_least(_SWIFT_3) is False:
        _default(candidates, K.MAX_SEQ_LENGTH, 2048, "ms-swift 2.x default", _pin(command))
        return
    _unknown(candidates, K.MAX_SEQ_LENGTH, "ms-swift's --max_length is unset: samples up to the model's own maximum "
                                           "length are kept (2048 before ms-swift 3.0)")


def _attention(command: SwiftCommand, candidates: Candidates) -> None:
    chosen = command.written.get("attn_impl")
    if chosen is None:
        return
    implementation = _ATTENTION.get(command.text("attn_impl") or "")
    if implementation is not None:
        candidates.add(K.ATTN_IMPLEMENTATION, Setting(implementation, SourceKind.DERIVED, None, via=(chosen,),
                                                      note=f"attn_impl {chosen.value}"))


def _vision(command: SwiftCommand, candidates: Candidates) -> None:
    """`freeze_vit` (multimodal models): on from ms-swift 3.0; 2.x trained the vision tower."""
    frozen = command.written.get("freeze_vit")
    if frozen is not None:
        value = coerce_as(bool, frozen.value).value
        if value is True or value is False:
            knob = K.FREEZE_VISION_TOWER if value else K.TUNE_VISION
            candidates.add(knob, replace(frozen, value=True, kind=SourceKind.DERIVED, via=(frozen,),
                                         note=f"freeze_vit {frozen.value}"))
        return
    if command.at_least(_SWIFT_3) is not False:
        # Unpinned, the frozen tower of 3.0 on is the side that raises no false alarm.
        _default(candidates, K.FREEZE_VISION_TOWER, True, "ms-swift default (freeze_vit)")


def _logits(command: SwiftCommand, candidates: Candidates) -> None:
    """`use_logits_to_keep` (from 3.5, on unless `false`): `swift sft` computes the logits of the positions that
    have a label only. Told as a loss that builds no full logits tensor; unpinned, this lower side raises no false
    alarm. Pre-training labels every position, so nothing is saved there."""
    switch = command.written.get("use_logits_to_keep")
    turned_off = switch is not None and not is_on(switch)
    if command.name != "sft" or turned_off or command.at_least(_LOGITS_TO_KEEP) is False:
        return
    cause = switch or command.release or Setting("sft", SourceKind.FRAMEWORK_DEFAULT, None)
    add_switch(candidates, FUSED_LOSS, cause, "ms-swift's use_logits_to_keep: logits only where a label is")


def _preference(command: SwiftCommand, candidates: Candidates) -> None:
    """`swift rlhf`: DPO unless `--rlhf_type` says otherwise. Not described: PPO, GRPO and GKD generate with the
    model, and the preference trainers' loss over each pair's logits (TRL's, with ms-swift's padding-free batches)
    holds far less than the full logits of both answers the memory model would count (ms-swift's own full DPO
    example trains in 57 GiB where that count alone is over 100)."""
    kind = command.text("rlhf_type") or "dpo"
    cause = command.written.get("rlhf_type") or Setting("dpo", SourceKind.FRAMEWORK_DEFAULT, None,
                                                        note="ms-swift default rlhf_type")
    what = "the model generates during training" if kind in _GENERATING else "the preference loss over each pair"
    add_out_of_scope(candidates, cause, f"`swift rlhf` ({kind}): {what} is not described")


def _placement(command: SwiftCommand, candidates: Candidates) -> None:
    """One process that sees several GPUs (`swift` without NPROC_PER_NODE or NNODES, or `python` running ms-swift's
    entry script) spreads the model over them; `--device_map` places it as written. Neither is what the memory
    model describes."""
    written = command.written.get("device_map")
    if written is not None:
        add_out_of_scope(candidates, written, "device_map: the model is placed over several GPUs as written")
        return
    env = command.env
    ray = command.written.get("use_ray")
    if is_on(ray):
        candidates.add(K.WORLD_SIZE, Setting(Unknown("ms-swift's Ray launch (use_ray) places its own workers"),
                                             SourceKind.DERIVED, None, via=(ray,)))
        return
    if command.launcher in DISTRIBUTED_LAUNCHERS:
        return  # one process per GPU
    if command.launcher == Launcher.SWIFT and swift_runs_torchrun(env):
        return
    visible = env.get("CUDA_VISIBLE_DEVICES")
    count = count_devices(visible.value) if visible is not None and isinstance(visible.value, str) else None
    if count == 1:
        return
    cause = visible or Setting("swift", SourceKind.DERIVED, None)
    gpus = count if count is not None else Unknown("the GPUs the process sees are the machine's")
    candidates.add(DEVICE_MAP_GPUS, replace(cause, value=gpus, kind=SourceKind.DERIVED, via=(cause,),
                                            note="ms-swift's device_map over the GPUs one process sees"))
    add_out_of_scope(candidates, cause, "one ms-swift process spreads the model over every GPU it sees "
                                        "(device_map auto): `swift` without NPROC_PER_NODE, or `python`")


def preset_config(candidates: Candidates, named: Setting, release: Optional[Setting]) -> bool:
    """The ZeRO settings of the preset `--deepspeed` names, if it names one (then True)."""
    name = named.value.strip() if isinstance(named.value, str) else None
    preset = PRESETS.get(name or "")
    if preset is None:
        return False
    note = f"ms-swift's `{name}` DeepSpeed preset"
    candidates.add(K.ZERO_STAGE, Setting(preset.stage, SourceKind.DERIVED, None, via=(named,), note=note))
    candidates.add(K.OFFLOAD_PARAM, Setting("cpu" if preset.offload_param else "none", SourceKind.DERIVED, None,
                                            via=(named,), note=note))
    offload = preset.offload_optimizer
    if offload is None:
        offload = _at_least(release, _ZERO3_OFFLOADS_OPTIMIZER)
    if offload is None:
        candidates.add(K.OFFLOAD_OPTIMIZER, Setting(Unknown(f"{note} offloads the optimizer from ms-swift 3.0.1, not "
                                                            "before; the repository pins no release"),
                                                    SourceKind.DERIVED, None, via=(named,), note=note))
    else:
        candidates.add(K.OFFLOAD_OPTIMIZER, Setting("cpu" if offload else "none", SourceKind.DERIVED, None,
                                                    via=(named,), note=note))
    if preset.reduce_bucket_size is not None:
        candidates.add(K.REDUCE_BUCKET_SIZE, Setting(preset.reduce_bucket_size, SourceKind.DERIVED, None,
                                                     via=(named,), note=note))
    return True
