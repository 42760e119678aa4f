"""When a port needs other DeepSpeed settings for a job whose config other jobs share, and no config beside it holds
them (`sibling_configs`), the job gets a config of its own: a copy of its config, in the same folder, with the plan's
settings written in, and its `--deepspeed` pointed at the copy. The shared config and the jobs that read it stay as
they are; the copy holds every other key of the original byte for byte, so the training is the same.

The copy is named after the job's launcher and what it shards and offloads (`zero3.json`, run by
`scripts/v1_5/finetune.sh`, with the optimizer offloaded: `finetune_zero3_offload.json`); a command a README shows,
after the recipe it runs. A file of that name already there is never written over: the port is then left to a person.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, List, Optional, Tuple

from trainlint.core import Edit, Fix, KnobChange, Setting, SourceKind, TrainingRun
from trainlint.fixers import editors
from trainlint.fixers.editors import Refused, same_value
from trainlint.fixers.edits import apply_edits, collide, merged_insertions, new_file
from trainlint.formats import FileKind, kind_of
from trainlint.knobs import K
from trainlint.readers.markdown import DOCUMENT_SUFFIX

# The knobs a port writes into a DeepSpeed config that does not name them yet, by their key in `zero_optimization`.
OFFLOAD_KEYS = {K.OFFLOAD_OPTIMIZER: "offload_optimizer", K.OFFLOAD_PARAM: "offload_param"}
# Settings whose place is no value the user wrote (a default, an assumption): the config does not name them.
_NOT_WRITTEN = frozenset({SourceKind.FRAMEWORK_DEFAULT, SourceKind.ASSUMED, SourceKind.DERIVED})
# What a file name may hold of a launcher's name: the rest becomes `_`.
_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")

ReadBytes = Callable[[str], Optional[bytes]]
RewriteValue = Callable[[Setting, object], Edit]


@dataclass(frozen=True)
class OwnConfig:
    """The copy a job gets: where it goes, as the launcher writes the path (`written`) and as a file (`path`), and
    the edit that creates it (None: a file of that name already holds those bytes)."""

    written: str
    path: str
    creation: Optional[Edit]


def own_config_name(config: str, launcher: str, stage: object, offloads: bool) -> str:
    """The file name of the copy of `config` for the job `launcher` runs, which shards at `stage` and offloads to the
    CPU when `offloads` (`finetune_zero3_offload.json`)."""
    stem = _NAME_UNSAFE.sub("_", Path(launcher).stem).strip("_") or "job"
    return f"{stem}_zero{stage}{'_offload' if offloads else ''}{Path(config).suffix}"


def _in_config(run: TrainingRun, change: KnobChange, config: str) -> bool:
    """Whether the job reads `change.knob` from `config`, or the change adds an offload the config does not name."""
    winner = run.settings.get(change.knob)
    if winner is not None and winner.origin is not None and winner.kind not in _NOT_WRITTEN:
        return winner.origin.path == config
    return change.knob in OFFLOAD_KEYS


@dataclass(frozen=True)
class CopySource:
    """The job's DeepSpeed JSON a copy would come from (the file its ZeRO stage is read from), its path as the
    command line writes it, and the changes of knobs the job reads from it."""

    config: str
    written: str
    changes: Tuple[KnobChange, ...]


def copy_target(run: TrainingRun, changes: Tuple[KnobChange, ...]) -> Optional[CopySource]:
    """Where a copy holding `changes` would come from; None when the job's ZeRO settings come from elsewhere than a
    JSON its command line names, or the changes name none of them."""
    written, stage = run.setting(K.DEEPSPEED), run.setting(K.ZERO_STAGE)
    if written is None or not isinstance(written.value, str) or stage is None \
            or stage.kind != SourceKind.CONFIG_FILE or stage.origin is None \
            or kind_of(stage.origin.path) != FileKind.JSON or Path(written.value).name != Path(stage.origin.path).name:
        return None
    config = stage.origin.path
    into = tuple(change for change in changes if _in_config(run, change, config))
    if not any(change.knob in (K.ZERO_STAGE, *OFFLOAD_KEYS) for change in into):
        return None
    return CopySource(config, written.value, into)


def with_own_config(run: TrainingRun, fix: Fix, source: CopySource, read: ReadBytes,
                    rewrite: RewriteValue) -> Tuple[Fix, Tuple[Edit, ...]]:
    """`fix` with the changes of `source` made in a copy of the job's config and its `--deepspeed` pointed there
    instead, and the edit that creates the copy (none when it is there already)."""
    config, written, into = source.config, source.written, source.changes
    own = own_config(run, config, written, into, read, rewrite)
    kept = tuple(change for change in fix.changes if change not in into)
    settings = ", ".join(f"{change.knob} {change.new}" for change in into)
    made = "a new copy" if own.creation is not None else "a copy"
    message = f"{fix.message}; {own.path} is {made} of {config} with {settings}"
    fix = replace(fix, changes=(*kept, KnobChange(K.DEEPSPEED, written, own.written)), message=message)
    return fix, (own.creation,) if own.creation is not None else ()


def own_config(run: TrainingRun, config: str, written: str, changes: Tuple[KnobChange, ...], read: ReadBytes,
               rewrite: RewriteValue) -> OwnConfig:
    """The copy of `config` (the job's DeepSpeed JSON, named `written` on its command line) holding `changes`, each
    of a knob the job reads from that config; `rewrite(setting, new)` is the edit of a value where it is written.
    Refused when a change cannot be written there, or a file of the copy's name holds anything else."""
    data = read(config)
    if data is None:
        raise Refused(f"cannot read {config}")
    stage = next((change.new for change in changes if change.knob == K.ZERO_STAGE), run.value(K.ZERO_STAGE))
    offloads = any(str(run.value(knob)).lower() == "cpu" for knob in OFFLOAD_KEYS) \
        or any(change.knob in OFFLOAD_KEYS and str(change.new).lower() == "cpu" for change in changes)
    # A command a README shows is named after the recipe it runs: `README_zero3.json` would say nothing of the job.
    named_after = run.recipe if run.recipe and Path(run.path).suffix.lower() == DOCUMENT_SUFFIX else run.path
    name = own_config_name(config, named_after, stage, offloads)
    path = str(Path(config).with_name(name))
    edits: List[Edit] = []
    for change in changes:
        winner = run.settings.get(change.knob)
        if winner is not None and winner.origin is not None and winner.origin.path == config:
            if not same_value(winner.value, change.new):
                edits.append(rewrite(winner, change.new))
        elif change.knob in OFFLOAD_KEYS:
            edits.append(editors.json.insert_offload(config, OFFLOAD_KEYS[change.knob], change.new, read))
        else:
            raise Refused(f"{config} does not set {change.knob}")
    edits = merged_insertions(edits)
    if any(collide(first, second) for first in edits for second in edits):
        raise Refused(f"the changes to a copy of {config} overlap; make it by hand")
    content = apply_edits(data, edits)
    there = read(path)
    if there is None and Path(path).exists():
        there = b""  # a folder, or a file that cannot be read
    if there is not None and there != content:
        raise Refused(f"{path} is already there; point the job at a copy of {config} of its own by hand")
    # A copy another job of the same name got, to the byte: taken as it is.
    creation = new_file(path, content.decode("utf-8")) if there is None else None
    return OwnConfig(written[:len(written) - len(Path(config).name)] + name, path, creation)

