"""OpenRLHF's supervised, reward-model and preference commands (`deepspeed --module openrlhf.cli.train_sft ...`, and
`train_rm`, `train_dpo`, `train_kto`, `train_prm`): the options each declares with argparse, told in knobs as
OpenRLHF uses them. Each option is read under its dotted name (`--train.micro_batch_size`, regrouped by
`openrlhf.utils.config.hierarchize`) and under the flat name earlier releases declared (`--micro_train_batch_size`);
a script declares one of the two. The value is the flag the launch passes, else the script's argparse default.

What the options mean (openrlhf/utils/utils.py `get_strategy`, openrlhf/utils/deepspeed/deepspeed.py and
deepspeed_utils.py): the micro-batch is each GPU's dataloader batch (`setup_dataloader` over the data-parallel
replicas) and DeepSpeed's `train_micro_batch_size_per_gpu`; the batch size is the global one, and the accumulation is
`batch × ring_attn_size × tensor_parallel_size // micro // world size` (`accumulated_gradient`), which DeepSpeed
computes the same way from `train_batch_size`. `get_train_ds_config` puts the ZeRO stage, `adam_offload` (the
optimizer states on the CPU; parameters are never offloaded for training) and the precision (`bf16.enabled` when
`param_dtype` is bf16, `fp16.enabled` when fp16) in the config. `Actor` adds LoRA adapters when the rank is above 0,
and loads a 4-bit base with `load_in_4bit`. The reward model is the base model with a value head (no vocabulary
logits). The reward model's and DPO's `concatenated_forward` run each pair's chosen and rejected answers in one
batch; DPO and KTO load the reference model again (`Actor` on the eval config: ZeRO-3 when training runs ZeRO-3, else
a whole copy), on the CPU between uses with `--ref.offload` (then not counted). KTO also runs a mismatched half batch
for its KL term in a forward of its own, whose graph lives until the loss detaches the KL (not through backward): not
counted as paired, so a KTO estimate may be low.

Packing (`packing_samples`) is not told: OpenRLHF pads each batch to its longest sample and removes the padding in
the forward, so rows hold what the data holds, never filled to the length limit."""
from __future__ import annotations

from dataclasses import replace
from typing import Mapping, Optional, Sequence

from trainlint.core import Setting, SourceKind, Unknown
from trainlint.knobs import ARGS, K, coerce_as
from trainlint.resolution.frameworks.base import Framework
from trainlint.resolution.frameworks.memory_features import (
    FUSED_LOSS,
    MODEL_PARALLEL,
    PAIRED_SEQUENCES,
    REFERENCE_MODEL,
    SEQUENCE_PARALLEL,
)
from trainlint.resolution.precedence import Candidates

# The commands this module describes, by module; PPO and GRPO (train_ppo_ray) run on Ray and are not among them.
COMMANDS = {f"openrlhf.cli.{name}": name for name in ("train_sft", "train_rm", "train_dpo", "train_kto", "train_prm")}
# Commands whose batches hold both answers of each pair (the reward model's and DPO's `concatenated_forward`).
_PAIRED = ("train_rm", "train_dpo")
# Commands that load a frozen reference model (train_dpo.py, train_kto.py: `ref_model = Actor(...)`).
_REFERENCE = ("train_dpo", "train_kto")

# Each option: its dotted name, then the flat name of earlier releases.
MICRO_BATCH = ("train.micro_batch_size", "micro_train_batch_size")
GLOBAL_BATCH = ("train.batch_size", "train_batch_size")
ZERO_STAGE = ("ds.zero_stage", "zero_stage")
PARAM_DTYPE = ("ds.param_dtype", "param_dtype")
BF16_SWITCH = ("bf16",)  # releases before `param_dtype`: bf16 with the switch, else no mixed precision
CHECKPOINTING = ("model.gradient_checkpointing_enable", "gradient_checkpointing")
MAX_LEN = ("data.max_len", "max_len")
MODEL = ("model.model_name_or_path", "pretrain")
LORA_RANK = ("ds.lora.rank", "lora_rank")
LOAD_IN_4BIT = ("ds.load_in_4bit", "load_in_4bit")
ADAM_OFFLOAD = ("ds.adam_offload", "adam_offload")
RING_ATTENTION = ("ds.ring_attn_size", "ring_attn_size")
TENSOR_PARALLEL = ("ds.tensor_parallel_size", "ds_tensor_parallel_size")
REFERENCE_OFFLOAD = ("ref.offload", "ref_offload")

# Options whose value is the knob's value as it is.
_COPIED = ((MICRO_BATCH, K.PER_DEVICE_TRAIN_BATCH_SIZE), (GLOBAL_BATCH, K.GLOBAL_BATCH_SIZE),
           (ZERO_STAGE, K.ZERO_STAGE), (CHECKPOINTING, K.GRADIENT_CHECKPOINTING), (MAX_LEN, K.MAX_SEQ_LENGTH),
           (MODEL, K.MODEL_NAME_OR_PATH), (LORA_RANK, K.LORA_R), (LOAD_IN_4BIT, K.LOAD_IN_4BIT))

# param_dtype -> (bf16, fp16) in the DeepSpeed config get_train_ds_config builds.
_DTYPES = {"bf16": (True, False), "fp16": (False, True)}

OPENRLHF = Framework(name="openrlhf", namespace=ARGS)


def command_of(entry: Optional[str], is_module: bool) -> Optional[str]:
    """Which OpenRLHF command a launch runs (`train_sft`), from its module or its script path; None for others."""
    if entry is None:
        return None
    name = entry if is_module else entry.removesuffix(".py").replace("/", ".").lstrip(".")
    for module, command in COMMANDS.items():
        if name == module or name.endswith(f".{module}"):
            return command
    return None


def _option(values: Mapping[str, Setting], names: Sequence[str]) -> Optional[Setting]:
    """The value of the first of `names` the script declares (its flag, else its default)."""
    for name in names:
        if name in values:
            return values[name]
    return None


def _derived(source: Setting, value, note: str) -> Setting:
    """A value computed from an option: no origin of its own, so a fix never rewrites the option with it."""
    return Setting(value, SourceKind.DERIVED, None, via=(source,), note=note)


def _whole(setting: Optional[Setting]):
    return None if setting is None else coerce_as(int, setting.value).value


def apply(command: str, values: Mapping[str, Setting], candidates: Candidates) -> None:
    """The knobs an OpenRLHF command's options give (`values`: each declared argument's flag or default). Run
    once the launcher's world size is a candidate: the accumulation is computed from it."""
    for names, knob in _COPIED:
        source = _option(values, names)
        if source is not None:
            candidates.add(knob, source)
    _adapters(values, candidates)
    _offload(values, candidates)
    _precision(values, candidates)
    _parallelism(values, candidates)
    _preference(command, values, candidates)
    _accumulation(values, candidates)


def _adapters(values: Mapping[str, Setting], candidates: Candidates) -> None:
    rank = _option(values, LORA_RANK)
    count = _whole(rank)
    if rank is None:
        return
    on = count > 0 if isinstance(count, int) else Unknown(f"the LoRA rank `{rank.text or rank.value}` is not known")
    candidates.add(K.LORA, _derived(rank, on, "OpenRLHF adds LoRA adapters when the rank is above 0"))


def _offload(values: Mapping[str, Setting], candidates: Candidates) -> None:
    switch = _option(values, ADAM_OFFLOAD)
    if switch is None:
        return
    on = coerce_as(bool, switch.value).value
    device = ("cpu" if on else "none") if isinstance(on, bool) else Unknown("whether Adam is offloaded is not known")
    candidates.add(K.OFFLOAD_OPTIMIZER, _derived(switch, device, "OpenRLHF's adam_offload"))


def _precision(values: Mapping[str, Setting], candidates: Candidates) -> None:
    dtype = _option(values, PARAM_DTYPE)
    if dtype is not None:
        known = _DTYPES.get(str(dtype.value).strip().lower()) if isinstance(dtype.value, str) else None
        if known is None:
            reason = dtype.value if isinstance(dtype.value, Unknown) else \
                Unknown(f"`{dtype.value}` is not a param_dtype OpenRLHF takes")
            known = (reason, reason)
        for knob, on in zip((K.BF16, K.FP16), known):
            candidates.add(knob, _derived(dtype, on, f"OpenRLHF param_dtype {dtype.value}"))
        return
    switch = _option(values, BF16_SWITCH)
    if switch is not None and coerce_as(bool, switch.value).value is False:
        # Without `--bf16` the weights load in the checkpoint's own dtype (`torch_dtype="auto"`) and DeepSpeed
        # runs without mixed precision: how many bytes each weight takes depends on the checkpoint.
        candidates.add(K.BF16, replace(switch, value=Unknown(
            "without --bf16 OpenRLHF loads the checkpoint's own dtype and DeepSpeed runs no mixed precision"),
            note="OpenRLHF without --bf16"))


def _parallelism(values: Mapping[str, Setting], candidates: Candidates) -> None:
    """Ring attention splits each sequence over its group; DeepSpeed's tensor parallelism (AutoTP) is not
    modelled, which leaves the job to no memory rule."""
    for names, knob, note in ((RING_ATTENTION, SEQUENCE_PARALLEL, "OpenRLHF ring attention"),
                              (TENSOR_PARALLEL, MODEL_PARALLEL, "DeepSpeed tensor parallelism")):
        source = _option(values, names)
        degree = _whole(source)
        if source is not None and isinstance(degree, int) and degree > 1:
            candidates.add(knob, _derived(source, degree, note))


def _preference(command: str, values: Mapping[str, Setting], candidates: Candidates) -> None:
    if command == "train_rm":
        # get_llm_for_sequence_regression (openrlhf/models/model.py): the base model's hidden states go to a value
        # head of width 1; no vocabulary logits are built.
        candidates.add(FUSED_LOSS, Setting(True, SourceKind.DERIVED, None,
                                           note="train_rm: a value head over the hidden states, no vocabulary logits"))
    if command in _PAIRED:
        candidates.add(PAIRED_SEQUENCES, Setting(2, SourceKind.DERIVED, None,
                                                 note=f"{command}: chosen and rejected answers in one batch"))
    if command not in _REFERENCE:
        return
    offload = _option(values, REFERENCE_OFFLOAD)
    offloaded = coerce_as(bool, offload.value).value if offload is not None else False
    if offloaded is False:
        via = () if offload is None else (offload,)
        candidates.add(REFERENCE_MODEL, Setting(True, SourceKind.DERIVED, None, via=via,
                                                note=f"{command}: a frozen reference copy of the model"))
    # Offloaded (or not known to stay): the reference waits on the CPU; not counted.


def _accumulation(values: Mapping[str, Setting], candidates: Candidates) -> None:
    """`batch × ring × tp // micro // world`: DeepSpeed refuses a global batch that is no whole multiple."""
    batch, micro = _option(values, GLOBAL_BATCH), _option(values, MICRO_BATCH)
    if batch is None or micro is None:
        return
    world = candidates.winner(K.WORLD_SIZE)
    sources = [batch, micro] + ([world] if world is not None else [])
    factors = [_whole(setting) for setting in sources]
    for names in (RING_ATTENTION, TENSOR_PARALLEL):
        source = _option(values, names)
        if source is not None:
            sources.append(source)
            factors.append(_whole(source))
        else:
            factors.append(1)
    via = tuple(sources)
    if world is None:
        value = Unknown("the world size is not known when the job is read")
    elif isinstance(world.value, Unknown):
        value = Unknown(f"the world size is unknown ({world.value.reason})")
    elif not all(isinstance(f, int) and not isinstance(f, bool) and f > 0 for f in factors):
        value = Unknown("a factor of OpenRLHF's accumulation (global batch, micro-batch, world size) is not known")
    else:
        total, micro_count, world_count = factors[0] * factors[3] * factors[4], factors[1], factors[2]
        if total % (micro_count * world_count):
            value = Unknown(f"the global batch {factors[0]} is no multiple of micro-batch {micro_count} × "
                            f"{world_count} GPUs, which DeepSpeed refuses")
        else:
            value = total // (micro_count * world_count)
    candidates.add(K.GRADIENT_ACCUMULATION_STEPS, Setting(value, SourceKind.DERIVED, None, via=via,
                                                          note="OpenRLHF: global batch / (micro-batch × world size)"))
