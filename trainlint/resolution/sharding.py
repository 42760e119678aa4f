"""FSDP written in any of its places (HF `--fsdp "full_shard auto_wrap"`, an accelerate config with
`distributed_type: FSDP`, `accelerate launch --use_fsdp`, axolotl's `fsdp:` list or `fsdp_config:`),
told in the terms the memory model reads: the ZeRO stage that shards the same states, and offload."""

from __future__ import annotations

from typing import Callable, Optional, Sequence, Tuple

from trainlint.core import Setting, ShardingEngine, SourceKind, Unknown
from trainlint.knobs import K, coerce, coerce_as
from trainlint.resolution.flags import option_value

# Sharding strategy -> the ZeRO stage whose per-GPU states match it. Hybrid sharding shards within a
# node only; counting it as full sharding is the closest the memory model can say.
_STAGE_OF_STRATEGY = {
    "full_shard": 3,
    "hybrid_shard": 3,
    "shard_grad_op": 2,
    "hybrid_shard_zero2": 2,
    "no_shard": 0,
}
# accelerate also writes the strategy as torch's enum number.
_STRATEGY_NUMBERS = {
    "1": "full_shard",
    "2": "shard_grad_op",
    "3": "no_shard",
    "4": "hybrid_shard",
    "5": "hybrid_shard_zero2",
}
_FSDP_DETAIL_KNOBS = (K.FSDP_SHARDING_STRATEGY, K.FSDP_RESHARD_AFTER_FORWARD, K.FSDP_OFFLOAD_PARAMS)

Winner = Callable[[str], Optional[Setting]]


def _text(setting: Optional[Setting]) -> Optional[str]:
    if setting is None or isinstance(setting.value, bool) or not isinstance(setting.value, (str, int)):
        return None
    return str(setting.value)


def _strategy_name(written: str) -> Optional[str]:
    name = written.strip().lower()
    name = _STRATEGY_NUMBERS.get(name, name)
    return name if name in _STAGE_OF_STRATEGY else None


def _from_option_words(fsdp: Setting) -> Optional[Tuple[str, bool]]:
    """HF TrainingArguments/axolotl `fsdp`: words such as `full_shard auto_wrap offload`."""
    text = _text(fsdp)
    if not text:
        return None
    words = text.replace(",", " ").lower().split()
    strategy = next((w for w in words if w in _STAGE_OF_STRATEGY), None)
    return (strategy, "offload" in words) if strategy else None


def _launcher_option(launcher_args: Sequence[Setting], name: str) -> Optional[Setting]:
    return option_value(launcher_args, name) if launcher_args else None


def _fsdp_details(
    winner: Winner, launcher_args: Sequence[Setting]
) -> Tuple[Optional[str], Optional[bool], Tuple[Setting, ...]]:
    """The strategy and offload an accelerate/axolotl FSDP block gives (defaults: full sharding, no offload)."""
    sources = []
    strategy_setting = _launcher_option(launcher_args, "fsdp_sharding_strategy") or winner(K.FSDP_SHARDING_STRATEGY)
    reshard = _launcher_option(launcher_args, "fsdp_reshard_after_forward") or winner(K.FSDP_RESHARD_AFTER_FORWARD)
    offload = _launcher_option(launcher_args, "fsdp_offload_params") or winner(K.FSDP_OFFLOAD_PARAMS)
    strategy = None
    if strategy_setting is not None and _text(strategy_setting):
        strategy = _strategy_name(_text(strategy_setting))
        sources.append(strategy_setting)
    if strategy is None and reshard is not None:
        # FSDP2: resharding after forward is full sharding; keeping the weights gathered is ZeRO-2-like.
        as_bool = coerce_as(bool, reshard.value).value
        if isinstance(as_bool, bool):
            strategy = "full_shard" if as_bool else "shard_grad_op"
        else:
            strategy = _strategy_name(_text(reshard) or "")
        sources.append(reshard)
    offloaded = None
    if offload is not None:
        value = coerce(K.FSDP_OFFLOAD_PARAMS, offload.value).value
        offloaded = value if isinstance(value, bool) else None
        sources.append(offload)
    return strategy or "full_shard", offloaded, tuple(sources)


def fsdp_sharding(
    winner: Winner, launcher_args: Sequence[Setting] = ()
) -> Optional[Tuple[str, bool, Tuple[Setting, ...]]]:
    """(strategy, offload, the settings that say so) when the job runs under FSDP, else None."""
    words = winner(K.FSDP)
    parsed = _from_option_words(words) if words is not None else None
    if parsed is not None:
        strategy, offload = parsed
        _, detail_offload, sources = _fsdp_details(winner, launcher_args)
        return strategy, bool(offload or detail_offload), (words, *sources)
    backend = winner(K.DISTRIBUTED_TYPE)
    use_flag = _launcher_option(launcher_args, "use_fsdp")
    on = (backend is not None and _text(backend) is not None and _text(backend).upper() == "FSDP") or (
        use_flag is not None and use_flag.value is True
    )
    # axolotl: an `fsdp_config:` block with FSDP's own keys turns FSDP on.
    details_written = [
        name
        for name in _FSDP_DETAIL_KNOBS
        if winner(name) is not None and winner(name).kind != SourceKind.FRAMEWORK_DEFAULT
    ]
    if not on and not (details_written and winner(K.FSDP_VERSION) is not None):
        return None
    strategy, offload, sources = _fsdp_details(winner, launcher_args)
    head = tuple(s for s in (backend, use_flag, winner(K.FSDP_VERSION)) if s is not None)
    return strategy, bool(offload), head + sources


def derive_fsdp(winner: Winner, add: Callable[[str, Setting], None], launcher_args: Sequence[Setting] = ()) -> None:
    """Adds zero_stage/offload settings derived from FSDP, unless a DeepSpeed config decides them."""
    deepspeed = winner(K.DEEPSPEED)
    if deepspeed is not None and (isinstance(deepspeed.value, Unknown) or deepspeed.value not in (None, "")):
        return
    found = fsdp_sharding(winner, launcher_args)
    if found is None:
        return
    strategy, offload, sources = found
    stage = _STAGE_OF_STRATEGY[strategy]
    note = f"FSDP {strategy} shards like ZeRO-{stage}"
    engine = ShardingEngine.FSDP_NO_SHARD if strategy == "no_shard" else ShardingEngine.FSDP
    add("zero_stage", Setting(stage, SourceKind.DERIVED, None, note=note, via=sources, engine=engine))
    if offload:
        for knob in (K.OFFLOAD_PARAM, K.OFFLOAD_OPTIMIZER):
            add(knob, Setting("cpu", SourceKind.DERIVED, None, note=f"FSDP {strategy} with CPU offload", via=sources))
