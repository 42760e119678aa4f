"""DeepSpeed: the JSON config a job names (through TrainingArguments' `deepspeed`, or an accelerate
config), and the ZeRO stage a job without one runs at."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

from trainlint.core import Diagnostic, Setting, ShardingEngine, SourceKind, Unknown
from trainlint.knobs import DEEPSPEED as DEEPSPEED_SPELLING
from trainlint.knobs import K
from trainlint.resolution.flags import option_value
from trainlint.resolution.frameworks.base import Framework
from trainlint.resolution.inputs import JobInputs
from trainlint.resolution.launch_writes import LaunchWrites
from trainlint.resolution.workspace import Workspace

# Top-level keys that make a JSON/YAML file a DeepSpeed config rather than a training recipe.
CONFIG_ROOTS = ("zero_optimization", "train_micro_batch_size_per_gpu", "train_batch_size")


@dataclass(frozen=True)
class ConfigView:
    """What trainlint can tell of where a launch's DeepSpeed config comes from, beyond its name: the reasons a
    config named but not found, or none named at all, leaves the ZeRO stage unknown rather than missing or none.

    `unread_entry`: why the entry script was not read; naming no config then says nothing (the script may shard the
    model itself, FSDP or DeepSpeed configured in code). `sharded_elsewhere`: why something out of view chooses the
    sharding (accelerate's default config, a file of arguments checked by itself). `cwd_unknown`: the launch runs
    from a directory not known statically, which may hold a relative config. `read_elsewhere`: why the flag is read
    by code trainlint has not read, which may take a name that is no file (a preset). `written`: the files the
    launcher writes before the launch, among which the config may be."""

    unread_entry: Optional[str] = None
    sharded_elsewhere: Optional[str] = None
    cwd_unknown: bool = False
    read_elsewhere: Optional[str] = None
    written: Optional[LaunchWrites] = None


def apply_config(path: Optional[Path], shown: str, named_by: Setting, workspace: Workspace,
                 inputs: JobInputs, view: ConfigView = ConfigView()) -> None:
    """The DeepSpeed config at `path` (None: `shown` names a file that does not exist, or one `view` says may be
    elsewhere)."""
    candidates = inputs.candidates
    if path is None and view.written is not None and view.written.names(shown):
        candidates.add(K.ZERO_STAGE, Setting(Unknown(f"the DeepSpeed config `{shown}` is written by the launcher "
                                                     "before the launch; what it holds is not read"),
                                             SourceKind.DERIVED, None, via=(named_by,)))
        return
    if path is None and view.cwd_unknown and not shown.startswith("/"):
        candidates.add(K.ZERO_STAGE, Setting(Unknown(f"the DeepSpeed config `{shown}` is relative to a directory "
                                                     "not known statically"), SourceKind.DERIVED, None,
                                             via=(named_by,)))
        return
    if path is None and view.read_elsewhere is not None:
        candidates.add(K.ZERO_STAGE, Setting(Unknown(f"{view.read_elsewhere}; `{shown}` is no file here, and that code "
                                                     "may read it as something else (a preset's name)"),
                                             SourceKind.DERIVED, None, via=(named_by,)))
        return
    if path is None:
        candidates.diagnostics.append(Diagnostic(
            "missing-file", f"the DeepSpeed config `{shown}` does not exist", named_by.origin.path
            if named_by.origin else shown, named_by.origin))
        # The config that would have set the stage is not there to read: the stage is unknown, not none.
        candidates.add(K.ZERO_STAGE, Setting(Unknown(f"the DeepSpeed config `{shown}` is not there to read"),
                                             SourceKind.DERIVED, None, via=(named_by,)))
        return
    config = workspace.config(path)
    inputs.read_config(config, DEEPSPEED_SPELLING)
    if "zero_optimization.stage" not in config.values:
        candidates.add(K.ZERO_STAGE, Setting(0, SourceKind.DERIVED, None, note=f"{config.path} has no ZeRO stage"))


def apply_chosen_config(inputs: JobInputs, workspace: Workspace, launcher_args: Sequence[Setting],
                        dirs: Sequence[Path], view: ConfigView = ConfigView()) -> None:
    """The config the winning `deepspeed` setting names; no DeepSpeed (ZeRO stage 0) when none is named, unless an
    accelerate config (read later) may bring one or `view` says why the stage is unknown."""
    candidates = inputs.candidates
    winner = candidates.winner(K.DEEPSPEED)
    if winner is None or winner.value is None or winner.value == "":
        if winner is None and option_value(launcher_args, "config_file") is not None:
            return
        via = (winner,) if winner is not None else ()
        if view.unread_entry is not None:
            candidates.add(K.ZERO_STAGE, Setting(Unknown(f"{view.unread_entry}; it may shard the model itself"),
                                                 SourceKind.DERIVED, None, via=via))
        elif view.sharded_elsewhere is not None:
            candidates.add(K.ZERO_STAGE, Setting(Unknown(view.sharded_elsewhere), SourceKind.DERIVED, None, via=via))
        else:
            candidates.add(K.ZERO_STAGE, Setting(0, SourceKind.DERIVED, None, note="no DeepSpeed config",
                                                 via=via, engine=ShardingEngine.NONE))
        return
    if not isinstance(winner.value, str):
        candidates.add(K.ZERO_STAGE, Setting(Unknown("the DeepSpeed config path is not known"),
                                             SourceKind.DERIVED, None, via=(winner,)))
        return
    apply_config(workspace.find(winner.value, dirs), winner.value, winner, workspace, inputs, view)


DEEPSPEED = Framework(name="deepspeed", namespace=DEEPSPEED_SPELLING)
