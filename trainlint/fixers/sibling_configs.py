"""A DeepSpeed config that other jobs share cannot be edited for one of them, but the repository often holds the
config a port needs beside it: LLaVA's `zero2.json`, `zero3.json` and `zero3_offload.json`, InternVL's
`zero_stage1_config.json` to `zero_stage3_config.json`. Pointing the job's `--deepspeed` at such a sibling changes
that job alone.

A sibling qualifies when every key outside `zero_optimization` is the same as in the job's config (precision, the
optimizer, the batch keys: what the training computes), it shards at the planned stage and offloads to the CPU at
least what the plan offloads, and the job still fits with the sibling's ZeRO settings (bucket sizes differ between
such files) and the plan's other changes. Of several, the first by name is taken."""
from __future__ import annotations

import os
from pathlib import Path
from typing import AbstractSet, Dict, List, Mapping, Optional

from trainlint.core import FileKind, SourceKind, TrainingRun, Value, file_kind
from trainlint.fixers.editors import same_value
from trainlint.knobs import DEEPSPEED, K, knob, knob_for
from trainlint.memory import Gpu, estimate
from trainlint.readers.deepspeed import read_json_config
from trainlint.readers.facts import ConfigFile
from trainlint.readers.source import safe_resolve

# The knobs a sibling config may set differently: how ZeRO shards and offloads. Everything else must match.
ZERO_KNOBS = frozenset({K.ZERO_STAGE, K.OFFLOAD_OPTIMIZER, K.OFFLOAD_PARAM})
_ZERO_BLOCK = "zero_optimization."
# Offload values that name a device by another word (DeepSpeed's older `cpu_offload: true`).
_OFFLOAD_WORDS = {"true": "cpu", "false": "none", "": "none"}
# A folder of configs this large is no config folder (a data folder): not searched.
_MAX_SIBLINGS = 64


def sibling_config(run: TrainingRun, planned: Mapping[str, Value], overrides: Mapping[str, Value],
                   gpu: Gpu, excluded: AbstractSet[Path] = frozenset()) -> Optional[Path]:
    """A JSON config beside the job's DeepSpeed config that gives the `planned` ZeRO values (knob -> value) with
    nothing else of the training changed, and with which the job fits `gpu` under the plan's `overrides`. Files in
    `excluded` (resolved: those this fix rewrote for other jobs) are not taken."""
    stage = run.setting(K.ZERO_STAGE)
    if stage is None or stage.kind != SourceKind.CONFIG_FILE or stage.origin is None \
            or file_kind(stage.origin.path) != FileKind.JSON:
        return None
    current_path = Path(stage.origin.path)
    current = read_json_config(current_path)
    if current.diagnostics:
        return None
    # The stage stays as it is unless the plan changes it.
    planned = {K.ZERO_STAGE: stage.value, **planned}
    for candidate in _candidates(current_path):
        if safe_resolve(candidate) in excluded:
            continue
        config = read_json_config(candidate)
        if config.diagnostics or _outside_zero(config) != _outside_zero(current):
            continue
        values = _deepspeed_knobs(config)
        for name in ZERO_KNOBS:
            values.setdefault(name, knob(name).default)
        for name in (K.OFFLOAD_OPTIMIZER, K.OFFLOAD_PARAM):
            values[name] = _device(values[name])
        if not _gives(values, planned):
            continue
        if estimate(run, gpu, {**overrides, **values}).fits:
            return candidate
    return None


def _gives(values: Mapping[str, Value], planned: Mapping[str, Value]) -> bool:
    """The sibling shards at the planned stage and offloads at least what the plan offloads, to the CPU (an
    NVMe offload needs a path on the machine): more offload moves more to the CPU, slower but no bigger."""
    if same_value(values[K.ZERO_STAGE], planned[K.ZERO_STAGE]) is not True:
        return False
    for name in (K.OFFLOAD_OPTIMIZER, K.OFFLOAD_PARAM):
        device = _device(values[name])
        if device not in ("none", "cpu"):
            return False
        if _device(planned.get(name)) == "cpu" and device != "cpu":
            return False
    return True


def _device(value: Value) -> str:
    """An offload device as written (`cpu_offload: true` offloads to the CPU)."""
    written = str(value).strip().lower() if value is not None else "none"
    return _OFFLOAD_WORDS.get(written, written)


def _candidates(current: Path) -> List[Path]:
    folder = current.parent
    try:
        with os.scandir(folder) as entries:
            names = sorted(entry.name for entry in entries
                           if entry.name.endswith(".json") and entry.is_file(follow_symlinks=False))
    except OSError:
        return []
    if len(names) > _MAX_SIBLINGS:
        return []
    return [folder / name for name in names if name != current.name]


def _outside_zero(config: ConfigFile) -> Dict[str, Value]:
    return {key: setting.value for key, setting in config.values.items() if not key.startswith(_ZERO_BLOCK)}


def _deepspeed_knobs(config: ConfigFile) -> Dict[str, Value]:
    """The knobs the config's keys write, for the memory model (the ZeRO stage, offloads, buckets)."""
    found: Dict[str, Value] = {}
    for key, setting in config.values.items():
        name = knob_for(key, DEEPSPEED)
        if name is not None:
            found[name] = setting.value
    return found
