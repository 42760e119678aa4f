"""A DeepSpeed config that other jobs share cannot be edited for one of them, but the repository often holds the
config a port needs beside it: LLaVA's `zero2.json`, `zero3.json` and `zero3_offload.json`, InternVL's
`zero_stage1_config.json` to `zero_stage3_config.json`. Pointing the job's `--deepspeed` at such a sibling changes
that job alone.

A sibling qualifies when every key outside `zero_optimization` is the same as in the job's config (precision, the
optimizer, the scheduler, clipping, the batch keys: what the training computes; keys that only log aside), it
shards at the planned stage and offloads to the CPU at least what the plan offloads, and the job still fits with
the sibling's ZeRO settings (bucket sizes differ between such files) and the plan's other changes. Of several, the
first by name is taken. One that holds the plan but changes more is reported, for a person to weigh. Only regular
files beside the config are read (no links), and no folder of more than a few dozen."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import AbstractSet, Dict, List, Mapping, Optional, Tuple

from trainlint.core import FileKind, SourceKind, TrainingRun, Value, file_kind
from trainlint.fixers.editors import same_value
from trainlint.knobs import DEEPSPEED, K, knob
from trainlint.memory import Gpu, estimate
from trainlint.readers.deepspeed import read_json_config
from trainlint.readers.facts import ConfigFile
from trainlint.readers.source import safe_resolve
from trainlint.resolution.inputs import config_values
from trainlint.resolution.precedence import Candidates

# The knobs a sibling config may set differently: how ZeRO shards and offloads. Everything else must match.
ZERO_KNOBS = frozenset({K.ZERO_STAGE, K.OFFLOAD_OPTIMIZER, K.OFFLOAD_PARAM})
_ZERO_BLOCK = "zero_optimization."
# Offload values that name a device by another word (DeepSpeed's older `cpu_offload: true`).
_OFFLOAD_WORDS = {"true": "cpu", "false": "none", "": "none"}
_ABSENT = object()
# DeepSpeed keys that only log or profile: they change nothing the training computes.
_REPORTING_KEYS = frozenset({"steps_per_print", "wall_clock_breakdown", "memory_breakdown", "dump_state",
                             "flops_profiler", "tensorboard", "wandb", "csv_monitor", "comms_logger"})
# A folder of configs this large is no config folder (a data folder): not searched.
_MAX_SIBLINGS = 64


@dataclass(frozen=True)
class SiblingSearch:
    """The sibling to point the job at, if any; else the first that holds the plan but changes other keys too (by
    their top-level names), for a person to weigh."""

    found: Optional[Path] = None
    near: Optional[Path] = None
    differs_in: Tuple[str, ...] = ()


def sibling_config(run: TrainingRun, planned: Mapping[str, Value], overrides: Mapping[str, Value],
                   gpu: Gpu, excluded: AbstractSet[Path] = frozenset()) -> SiblingSearch:
    """A JSON config beside the job's DeepSpeed config that gives the `planned` ZeRO values (knob -> value) with
    nothing else of the training changed, and with which the job fits `gpu` under the plan's `overrides`. Files in
    `excluded` (resolved: those this fix rewrote in place for other jobs) are not taken."""
    stage = run.setting(K.ZERO_STAGE)
    if stage is None or stage.kind != SourceKind.CONFIG_FILE or stage.origin is None \
            or file_kind(stage.origin.path) != FileKind.JSON:
        return SiblingSearch()
    current_path = Path(stage.origin.path)
    current = read_json_config(current_path)
    if current.diagnostics:
        return SiblingSearch()
    # The stage stays as it is unless the plan changes it.
    planned = {K.ZERO_STAGE: stage.value, **planned}
    near: Optional[SiblingSearch] = None
    for candidate in _candidates(current_path):
        if safe_resolve(candidate) in excluded:
            continue
        config = read_json_config(candidate)
        if config.diagnostics:
            continue
        values = _deepspeed_knobs(config)
        for name in ZERO_KNOBS:
            values.setdefault(name, knob(name).default)
        for name in (K.OFFLOAD_OPTIMIZER, K.OFFLOAD_PARAM):
            values[name] = _device(values[name])
        if not _gives(values, planned) or not estimate(run, gpu, {**overrides, **values}).fits:
            continue
        differs = _differing_keys(_outside_zero(current), _outside_zero(config))
        if not differs:
            return SiblingSearch(candidate)
        near = near or SiblingSearch(None, candidate, differs)
    return near or SiblingSearch()


def _differing_keys(current: Mapping[str, Value], other: Mapping[str, Value]) -> Tuple[str, ...]:
    """The top-level keys (`scheduler`, `gradient_clipping`) under which two configs' values differ, in order."""
    keys = [key for key in {**current, **other} if current.get(key, _ABSENT) != other.get(key, _ABSENT)]
    return tuple(dict.fromkeys(key.split(".", 1)[0] for key in sorted(keys)))


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
    """The config's values that must match: all but its ZeRO block and what only logs or profiles."""
    return {key: setting.value for key, setting in config.values.items()
            if not key.startswith(_ZERO_BLOCK) and key.split(".", 1)[0] not in _REPORTING_KEYS}


def _deepspeed_knobs(config: ConfigFile) -> Dict[str, Value]:
    """The knobs the config's keys write, as a job reading it gets them (resolution's `config_values`), for the
    memory model: the ZeRO stage, offloads, buckets."""
    candidates = Candidates()
    config_values(config, DEEPSPEED, candidates)
    winners, _pins = candidates.resolve()
    return {name: setting.value for name, setting in winners.items()}
