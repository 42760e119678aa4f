"""From a launch command (or a recipe) to a TrainingRun: every knob with its winning value.

This is the assembly: which sources a job has (launcher flags, the entry script, recipes, config
files, the launcher's world size) and in what order they are gathered. Which value wins lives in
`precedence`; each framework's defaults and derived knobs live in `frameworks`.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from trainlint.core import (
    DISTRIBUTED_LAUNCHERS,
    Diagnostic,
    FileKind,
    Launcher,
    Origin,
    RunFacts,
    Setting,
    SourceKind,
    TrainingRun,
    Unknown,
    file_kind,
)
from trainlint.knobs import HF_BOOL_FIELDS, SWIFT, K, knob_for
from trainlint.readers.facts import Launch
from trainlint.readers.hostfile import HostFile
from trainlint.readers.source import display_path, safe_resolve
from trainlint.resolution import axolotl_cli, frameworks
from trainlint.resolution.adapter_inputs import adapters_without_input_grads
from trainlint.resolution.entry import (
    EntryFacts,
    collect,
    eval_dataset_fact,
    locate_module,
    locate_script,
)
from trainlint.resolution.entry_settings import (
    Flags,
    argument_values,
    code_settings,
    command_flags,
    compute_metrics,
    data_batch,
    flag_spellings,
    launcher_settings,
    misspelled_options,
    refused_prefixes,
)
from trainlint.resolution.flags import as_flag, key_value, last_by_name, option_value, parse_flags
from trainlint.resolution.frameworks import (
    AXOLOTL,
    HF_TRAINER,
    DeriveContext,
    accelerate,
    deepspeed,
    megatron,
    openrlhf,
    recipe_framework,
    swift,
)
from trainlint.resolution.frameworks.base import Framework
from trainlint.resolution.frameworks.hf_trainer import unread_entry_defaults
from trainlint.resolution.frameworks.llamafactory_v1 import UNMODELLED as LLAMAFACTORY_V1_UNMODELLED
from trainlint.resolution.frameworks.memory_features import NON_GPU_DEVICES, add_out_of_scope
from trainlint.resolution.frameworks.trl_defaults import apply_trl_defaults
from trainlint.resolution.inputs import KNOB_TYPES, JobInputs
from trainlint.resolution.launch_folder import cwd_candidates
from trainlint.resolution.launch_writes import LaunchWrites
from trainlint.resolution.precedence import PRECEDENCE, Candidates, by_precedence
from trainlint.resolution.trains import (
    adapters_in_unread_code,
    forward_only_step,
    looks_like_training,
    never_trains,
    own_sequence_parallel,
    prefix_tuning,
    training_switch,
)
from trainlint.resolution.workspace import Workspace, transformers_ceiling, transformers_pin
from trainlint.resolution.world import visible_gpus, world_size

__all__ = ["KNOB_TYPES", "PRECEDENCE", "JobBuild", "add_recipe", "build_run", "by_precedence", "python_run",
           "recipe_run"]

_RECIPE_MARKERS = ("per_device_train_batch_size", "micro_batch_size", "model_name_or_path", "base_model")
_EMPTY_VALUES = (None, "", 0, 0.0, "None", "none")


@dataclass
class JobBuild:
    """A job being assembled from one launch (or one recipe)."""

    launch: Launch
    script_path: Path
    workspace: Workspace
    inputs: JobInputs = field(default_factory=JobInputs)
    facts: Optional[EntryFacts] = None
    entry_shown: Optional[str] = None
    entry_exists: Optional[bool] = None
    flags: Tuple[Tuple[str, Setting], ...] = ()
    flag_spellings: Tuple[Tuple[str, str], ...] = ()
    refused_prefixes: Tuple[Tuple[str, str], ...] = ()
    misspelled_options: Tuple[Tuple[str, str], ...] = ()
    batch_multiplier: Optional[Setting] = None
    job_launcher: Optional[Launcher] = None  # the job's own launcher, when another one starts its processes
    recipe: Optional[str] = None
    # Whether a trainer of the entry script gets compute_metrics (entry_settings.compute_metrics).
    compute_metrics: Optional[bool] = None
    # The folder the launch's relative entry path was found from, when only one holds it: the launch runs there, so
    # what else the launcher reads relatively from where it runs (deepspeed's hostfile) is looked up there alone.
    launch_folder: Optional[Path] = None

    @property
    def candidates(self) -> Candidates:
        return self.inputs.candidates


# ---------------------------------------------------------------- launches

def python_path_roots(launch: Launch, dirs: Sequence[Path], workspace: Workspace) -> List[Path]:
    """The folders `export PYTHONPATH=src:$PYTHONPATH` puts on Python's module path for the launch (a script run as
    `deepspeed src/training/train.py` imports `training.params` through it). Only the entries written literally
    count (an expansion is the caller's), each relative to the first of the launch's folders that holds it."""
    setting = launch.env.get("PYTHONPATH")
    if setting is None:
        return []
    text = setting.value if isinstance(setting.value, str) else (setting.text or "")
    found: List[Path] = []
    for entry in text.strip("'\"").split(":"):
        if not entry or any(mark in entry for mark in ("$", "`", "~")):
            continue
        for base in ([Path(entry)] if os.path.isabs(entry) else [Path(folder) / entry for folder in dirs]):
            if base.is_dir() and workspace.inside(base):
                found.append(base)
                break
    return found


def build_run(launch: Launch, script_path: Path, workspace: Workspace) -> Optional[TrainingRun]:
    """The run a launch starts, or None when it does not look like training (an eval loop)."""
    if not launch.cwd_unknown and _runs_out_of_view(workspace, script_path, launch):
        launch = replace(launch, cwd_unknown=True)
    build = JobBuild(launch, script_path, workspace)
    dirs = workspace.search_dirs(script_path, launch.cwd)
    shown_script = display_path(script_path)
    build.inputs.files.append(shown_script)
    if axolotl_cli.runs_axolotl_train(launch):
        return _axolotl_run(build, dirs)
    entry_name = launch.entry.value if launch.entry is not None and isinstance(launch.entry.value, str) else None
    swift_entry = swift.command_of_entry(entry_name, launch.entry_is_module)
    if launch.launcher == Launcher.SWIFT or swift_entry is not None:
        return _swift_run(build, dirs, swift_entry)
    entry_path = _resolve_entry(build, dirs)
    launch = build.launch
    if entry_path is not None and file_kind(entry_path) == FileKind.PYTHON:
        build.facts = collect(entry_path, workspace, [*python_path_roots(launch, dirs, workspace), *dirs])
        # A script outside the scanned tree is not read (its refusal is reported): unknown, not present.
        build.entry_exists = True if workspace.allow_outside_reads or workspace.inside(entry_path) else None
        build.inputs.files.extend(m.path for m in build.facts.modules)

    is_bool = build.facts.is_bool if build.facts else (lambda name: name.replace("-", "_") in HF_BOOL_FIELDS)
    parsed, positionals = parse_flags(launch.script_args, is_bool)
    flags = last_by_name(parsed)
    build.flags = tuple((flag.name, flag.flag) for flag in parsed)
    recipe_entry = entry_path is not None and file_kind(entry_path) == FileKind.YAML
    if launch.launcher == Launcher.LLAMAFACTORY_CLI or recipe_entry:
        return _recipe_run(build, entry_path, flags, positionals, dirs)
    recipe = _recipe_argument(build, positionals[0] if positionals else None, dirs) if entry_path is not None else None
    if recipe is not None:
        # `accelerate launch src/train.py recipe.yaml`: the script hands the file to its parser.
        code_settings(build.facts, {}, build.candidates)
        build.compute_metrics = compute_metrics(build.facts, None)  # the recipe's values decide its branches
        return _recipe_run(build, recipe, flags, positionals[1:], dirs)
    config_flag = flags.get(TRL_CONFIG_FLAG) if build.facts is not None and build.facts.reads_config_flag else None
    recipe = _recipe_argument(build, config_flag.value, dirs) if config_flag is not None else None
    if recipe is not None:
        # `src/open_r1/sft.py --config recipe.yaml`: TRL's parser takes its values from the file, and the command
        # line's other flags over them.
        code_settings(build.facts, {}, build.candidates)
        build.compute_metrics = compute_metrics(build.facts, None)
        rest = {name: flag for name, flag in flags.items() if name != TRL_CONFIG_FLAG}
        return _recipe_run(build, recipe, rest, positionals, dirs)
    build.flag_spellings = flag_spellings(build.facts, flags)
    build.refused_prefixes = refused_prefixes(build.facts, flags)
    build.misspelled_options = misspelled_options(build.facts, flags)
    flags = command_flags(build.facts, flags, positionals, build.flag_spellings)
    # A distributed launch of a script that is gone is reported whatever its flags: it cannot start.
    gone_distributed = build.entry_exists is False and launch.launcher in DISTRIBUTED_LAUNCHERS
    if not (gone_distributed or looks_like_training(flags, build.facts)):
        return None
    if build.entry_exists is False:
        build.candidates.diagnostics.append(Diagnostic(
            "missing-file", f"the entry script `{launch.entry.value}` does not exist (looked in "
            f"{', '.join(display_path(d) or '.' for d in dirs[:3])})", shown_script, launch.entry.origin))
    launcher_settings(build.facts, flags, build.candidates)
    code_settings(build.facts, flags, build.candidates)
    build.compute_metrics = compute_metrics(build.facts, flags)
    build.batch_multiplier = data_batch(build.facts, flags)
    read_elsewhere = _unread_parser_reason(build.facts) if build.facts is not None else None
    unread = _unread_reason(build) if build.facts is None else read_elsewhere
    machine_default = accelerate.default_backend_reason(launch.launcher_args, flags) \
        if launch.launcher == Launcher.ACCELERATE else None
    deepspeed.apply_chosen_config(build.inputs, workspace, launch.launcher_args, dirs, deepspeed.ConfigView(
        unread_entry=unread or _own_deepspeed_reason(build), sharded_elsewhere=machine_default,
        cwd_unknown=launch.cwd_unknown, read_elsewhere=read_elsewhere, written=LaunchWrites.of(launch)))
    _world(build, dirs)
    _environment(build)
    training_switch(build.facts, flags, build.candidates)
    never_trains(build.facts, build.candidates)
    forward_only_step(build.facts, flags, build.candidates)
    prefix_tuning(build.facts, flags, build.candidates)
    own_sequence_parallel(build.facts, flags, build.candidates)
    adapters_in_unread_code(build.facts, flags, build.candidates)
    megatron.apply(flags, build.candidates)
    command = openrlhf.command_of(entry_name, launch.entry_is_module)
    if command is not None and build.facts is not None:
        openrlhf.apply(command, argument_values(build.facts, flags), build.candidates)
    if unread is not None:
        # Nothing shows the script trains with TrainingArguments (OLMo-core, OpenRLHF's own parsers): the
        # values it takes when the launch passes none are unknown, not transformers' defaults.
        unread_entry_defaults(unread, build.candidates)
    elif build.facts.uses_hf_trainer:
        _hf_defaults(build, {})
    return _finish(build, shown_script)


def _runs_out_of_view(workspace: Workspace, script_path: Path, launch: Launch) -> bool:
    """Whether the launch may run in a folder the scanned tree does not show, whose files it names relatively: one
    the tree lacks is then unknown, not missing."""
    # The repository declares a submodule it does not hold: its launchers may be meant to run from inside it.
    if workspace.unpopulated_submodule(script_path) is not None:
        return True
    if launch.cwd is not None:
        # `cd /home/user/harness`, or `cd Megatron-LM` into a checkout the README has users clone.
        return _cwd_out_of_view(workspace, script_path, launch.cwd)
    # sbatch runs a batch script in the folder it was submitted from (unless `--chdir` says), which may be another
    # project's checkout (smollm's `run_train.py` is nanotron's).
    return _sbatch_without_chdir(workspace, script_path)


def _sbatch_without_chdir(workspace: Workspace, script_path: Path) -> bool:
    if file_kind(script_path) != FileKind.SHELL:
        return False
    directives = workspace.shell(script_path).sbatch
    return bool(directives) and "chdir" not in directives


def _cwd_out_of_view(workspace: Workspace, script_path: Path, cwd: str) -> bool:
    """Whether the folder a launcher `cd`s into is outside the scanned tree, or absent from it (from every place a
    relative `cd` may start)."""
    if workspace.allow_outside_reads:
        return False
    if os.path.isabs(cwd):
        return not workspace.inside(Path(cwd))
    script_dir = safe_resolve(script_path).parent
    folders = cwd_candidates(script_dir, cwd, workspace.invocation_dir, workspace.repo_root(script_dir))
    return not any(os.path.isdir(folder) and workspace.inside(folder) for folder in folders)


def _own_deepspeed_reason(build: JobBuild) -> Optional[str]:
    """Why naming no DeepSpeed config says nothing of the sharding: under the `deepspeed` launcher, a script
    that is not an HF Trainer script (OpenRLHF, DeepSpeed's own examples) builds its DeepSpeed config itself; under
    any launcher, one that trains with a trainer of the repository's own that is no HF Trainer (CoLLiE's, which
    shards and pipelines as its config object says) sets up the sharding that trainer does, and a script that
    trains without HF's Trainer at all (a Megatron-style loop with its `--use-distributed-optimizer`, FSDP wrapped
    in code) shards as its code says. Only accelerate's own config speaks for such a script's sharding."""
    if build.facts is None or build.facts.uses_hf_trainer:
        return None
    if build.launch.launcher == Launcher.DEEPSPEED:
        return "the entry script builds its own DeepSpeed setup under the `deepspeed` launcher"
    if build.facts.calls_own_trainer:
        return "the entry script trains with a trainer of the repository's own, which sets up its sharding itself"
    if build.launch.launcher != Launcher.ACCELERATE:
        return ("the entry script trains without HF's Trainer, so its own code sets up the sharding (FSDP, a "
                "distributed optimizer, DeepSpeed) or none")
    return None


def _unread_parser_reason(facts: EntryFacts) -> Optional[str]:
    """Why the flags of a script that parses none of them itself, and hands the run to a function trainlint has
    not read (ms-swift's `swift/cli/rlhf.py` calls `rlhf_main()`), have meanings and defaults that are unknown."""
    if facts.has_parser or facts.uses_hf_trainer:
        return None
    call = facts.unread_call
    if call is None:
        return None
    return (f"{display_path(facts.path)} hands its command line to `{call}()`, which trainlint has not read, so the "
            "defaults it trains with are unknown")


def _unread_reason(build: JobBuild) -> str:
    entry = build.launch.entry
    name = f"`{entry.value}`" if entry is not None and isinstance(entry.value, str) else "of the launch"
    how = {False: "does not exist", None: "is not in the scanned tree"}.get(build.entry_exists, "was not read")
    return f"the entry script {name} {how}, so the defaults it trains with are unknown"


def _resolve_entry(build: JobBuild, dirs: Sequence[Path]) -> Optional[Path]:
    launch = build.launch
    entry = launch.entry
    if entry is None or not isinstance(entry.value, str):
        return None
    if launch.entry_is_module:
        located = locate_module(build.workspace, entry.value, build.script_path, dirs, launch.cwd_unknown)
        build.entry_shown, build.entry_exists = located.shown, located.exists
        return located.path
    located = locate_script(build.workspace, entry.value, dirs, launch.cwd_unknown)
    build.entry_shown, build.entry_exists = located.shown, located.exists
    if located.held_elsewhere:
        # The launch may be meant to run where its entry is: what else it names relatively is unknown, not missing.
        build.launch = replace(launch, cwd_unknown=True)
    if located.path is not None and launch.cwd is None:
        candidates = _entry_candidates(build.workspace, entry.value, dirs)
        if len(candidates) > 1:
            # NExT-GPT's `NExT-GPT-Lagacy/code/scripts/train.sh` runs `train.py`, which is the repository's own from
            # its root and the legacy code's from `code/`: which one runs is the caller's choice, so neither's
            # arguments are the job's.
            shown = ", ".join(display_path(found) for found in candidates)
            build.entry_shown = (f"{entry.value} ({len(candidates)} files of that name, {shown}, one for each folder "
                                 "the launcher may be started from: its arguments are unknown)")
            build.entry_exists = None
            return None
    if located.path is not None and not located.held_elsewhere \
            and not Path(entry.value).is_absolute() and not entry.value.startswith("~"):
        build.launch_folder = next((folder for folder in dirs
                                    if safe_resolve(folder / entry.value) == safe_resolve(located.path)), None)
    return located.path


def _entry_candidates(workspace: Workspace, written: str, dirs: Sequence[Path]) -> List[Path]:
    """The distinct files in the scanned tree a relative entry path names from each folder the launch may start in."""
    found: List[Path] = []
    for folder in dirs:
        path = workspace.find(written, [folder])
        if path is not None and workspace.inside(path) and safe_resolve(path) not in map(safe_resolve, found):
            found.append(path)
    return found


def _world(build: JobBuild, dirs: Sequence[Path], visible_decides: bool = False) -> None:
    """The process count the launcher starts (with an accelerate config, what that config says; with
    `visible_decides`, accelerate told nothing starts one process per visible GPU)."""
    launch = build.launch
    sbatch = build.workspace.shell(build.script_path).sbatch if file_kind(build.script_path) == FileKind.SHELL else {}
    size = world_size(launch, sbatch, _hostfile(build, dirs))
    if launch.launcher == Launcher.ACCELERATE:
        accelerate.read_launch_config(build.inputs, build.workspace, launch.launcher_args, dirs, launch.cwd_unknown)
        if size is None and K.WORLD_SIZE not in build.candidates.by_knob and visible_decides:
            size = visible_gpus(launch.env, "accelerate without a config or --num_processes starts one process "
                                            "per visible GPU")
        if size is None and K.WORLD_SIZE not in build.candidates.by_knob:
            size = Setting(Unknown("accelerate uses its default config for the process count"), SourceKind.DERIVED)
    if size is not None:
        build.candidates.add(K.WORLD_SIZE, size)
    for name in ("nnodes", "num_nodes"):
        nodes = option_value(launch.launcher_args, name)
        if nodes is not None:
            build.candidates.add(K.NUM_NODES, replace(nodes, kind=SourceKind.LAUNCHER_FLAG))


def _hostfile(build: JobBuild, dirs: Sequence[Path]) -> Optional[HostFile]:
    """The hostfile `deepspeed --hostfile FILE` names, when it is in the tree (DeepSpeed reads it from the
    directory the launch runs in)."""
    if build.launch.launcher != Launcher.DEEPSPEED:
        return None
    named = option_value(build.launch.launcher_args, "hostfile")
    if named is None or not isinstance(named.value, str):
        return None
    # Read from where the launch runs: the folder its entry path was found from, when that is known (MGM's
    # `deepspeed --hostfile ../hostfile mgm/train/train_mem.py`, run from the repository, names a file above it).
    path = build.workspace.find(named.value, [build.launch_folder] if build.launch_folder is not None else dirs)
    return build.workspace.hostfile(path) if path is not None else None


def _environment(build: JobBuild) -> None:
    alloc = build.launch.env.get("PYTORCH_CUDA_ALLOC_CONF")
    if alloc is not None:
        build.candidates.add(K.ALLOC_CONF, replace(alloc, kind=SourceKind.ENVIRONMENT))
    # torch_xla's runtime runs the job on the device PJRT_DEVICE names: on TPUs (or the CPU) the job holds no
    # GPU memory, and XLA's sharding and compiled graphs are not what the memory model describes.
    device = build.launch.env.get("PJRT_DEVICE")
    if device is not None and isinstance(device.value, str) and device.value.upper() in _NON_GPU_XLA_DEVICES:
        devices = _NON_GPU_XLA_DEVICES[device.value.upper()]
        reason = f"PJRT_DEVICE={device.value}: torch_xla runs the job on {devices}, not on GPUs"
        _non_gpu(build, device, devices, reason)
    # torch_npu picks the Ascend NPUs a job runs on from ASCEND_RT_VISIBLE_DEVICES (its CUDA_VISIBLE_DEVICES).
    npus = build.launch.env.get("ASCEND_RT_VISIBLE_DEVICES")
    if npus is not None:
        _non_gpu(build, npus, "Ascend NPUs", "ASCEND_RT_VISIBLE_DEVICES: torch_npu runs the job on Ascend NPUs, not on "
                                             "GPUs")


def _non_gpu(build: JobBuild, setting: Setting, devices: str, reason: str) -> None:
    add_out_of_scope(build.candidates, setting, reason)
    build.candidates.add(NON_GPU_DEVICES, replace(setting, value=devices, kind=SourceKind.DERIVED, origin=None,
                                                  via=(setting,), note=reason))


_NON_GPU_XLA_DEVICES = {"TPU": "TPUs", "CPU": "the CPU", "NEURON": "AWS Neuron devices"}


# ---------------------------------------------------------------- recipes

# The flag TRL's `TrlParser.parse_args_and_config` reads a file of arguments from.
TRL_CONFIG_FLAG = "config"


def _recipe_argument(build: JobBuild, word: Optional[Setting], dirs: Sequence[Path]) -> Optional[Path]:
    """The YAML/JSON arguments file `word` names, if it is one: an entry script's first positional argument
    (`train.py recipe.yaml`, read by HfArgumentParser.parse_yaml_file or LLaMA-Factory) or TRL's `--config`."""
    if word is None or not isinstance(word.value, str):
        return None
    written = word.value
    if file_kind(written) not in (FileKind.YAML, FileKind.JSON):
        return None
    path = build.workspace.find(written, dirs)
    if path is None:
        return None
    keys = build.workspace.config(path).values
    roots = {key.split(".", 1)[0] for key in keys}
    if roots & set(deepspeed.CONFIG_ROOTS) or not roots & set(_RECIPE_MARKERS):
        return None
    return path


def _recipe_overrides(flags: Flags, positionals: Sequence) -> List[Tuple[str, Setting]]:
    """Arguments given next to (or instead of) a recipe: `--cutoff_len 1024` and `cutoff_len=1024`."""
    found: List[Tuple[str, Setting]] = []
    for word in positionals:
        pair = key_value(word)
        if pair is not None:
            found.append((pair[0], as_flag(pair[1], pair[0])))
    for name, flag in flags.items():
        found.append((name, as_flag(flag.value, f"--{name}")))
    return found


def _recipe_run(build: JobBuild, recipe: Optional[Path], flags: Flags, positionals: Sequence = (),
                dirs: Sequence[Path] = ()) -> Optional[TrainingRun]:
    """`llamafactory-cli train recipe.yaml key=value`, `llamafactory-cli train --flag v ...`,
    `torchrun train.py recipe.yaml`: the recipe and the arguments next to it hold the settings."""
    shown_script = display_path(build.script_path)
    if recipe is None and build.launch.entry is not None:
        if build.entry_exists is False:  # not one outside the tree or relative to a directory not known
            build.candidates.diagnostics.append(Diagnostic(
                "missing-file", f"the recipe `{build.launch.entry.value}` does not exist", shown_script,
                build.launch.entry.origin))
        return _finish(build, shown_script)
    _world(build, dirs)
    add_recipe(build, recipe, _recipe_overrides(flags, positionals))
    return _finish(build, shown_script)


def add_recipe(build: JobBuild, recipe: Optional[Path], overrides: Sequence[Tuple[str, Setting]] = (),
               owner: Optional[Framework] = None, alone: bool = False) -> None:
    """A LLaMA-Factory or axolotl recipe, or a file of HF arguments (None: arguments alone), and the arguments
    that override it; `owner`: the framework that reads it, when the command says which; `alone`: the file
    is checked by itself, with no command in view."""
    written: Dict[str, Setting] = {}
    if recipe is None:
        owner = owner or frameworks.LLAMAFACTORY
        dirs = build.workspace.search_dirs(build.script_path, build.launch.cwd)
    else:
        config = build.workspace.config(recipe)
        owner = owner or recipe_framework(config.values)
        build.recipe = config.path
        build.inputs.read_config(config, owner.namespace)
        written.update(config.values)
        dirs = build.workspace.search_dirs(recipe, None)
    for key, setting in overrides:
        written[key] = setting
        name = knob_for(key, owner.namespace)
        if name is not None:
            build.candidates.add(name, setting)
    out_of_view = _out_of_view(owner, alone)
    # `accelerate launch` with no config file of its own shards as the machine's default config says (as a script's
    # flags do in `build_run`); the other settings are the recipe's.
    machine_default = accelerate.default_backend_reason(build.launch.launcher_args, ()) \
        if build.launch.launcher == Launcher.ACCELERATE else None
    # A file naming FSDP shards by itself; one naming a DeepSpeed config has it read (the reason then goes unused).
    fsdp_named = any(key.split(".", 1)[0] == "fsdp" for key in written)
    deepspeed.apply_chosen_config(build.inputs, build.workspace, build.launch.launcher_args, dirs, deepspeed.ConfigView(
        sharded_elsewhere=None if fsdp_named else out_of_view or machine_default,
        # A recipe checked by itself runs from a directory no command in view states, and its framework opens a
        # relative DeepSpeed path from there (LLaMA-Factory's `examples/deepspeed/...` from its own checkout): one
        # not found is unknown.
        cwd_unknown=(recipe is None and build.launch.cwd_unknown) or alone))
    if K.WORLD_SIZE not in build.candidates.by_knob:
        build.candidates.add(K.WORLD_SIZE, Setting(Unknown("the recipe runs on every visible GPU"), SourceKind.DERIVED))
    if out_of_view is not None:
        # Whose parser reads the file (TrainingArguments, TRL's configs, a script's own dataclass) and what the
        # command adds (`accelerate launch --mixed_precision bf16`) are not in view: no defaults are assumed.
        unread_entry_defaults(out_of_view, build.candidates)
    else:
        _hf_defaults(build, written)
    owner.defaults(written, build.candidates)


def _out_of_view(owner: Framework, alone: bool) -> Optional[str]:
    """Why a recipe leaves its sharding and unwritten settings unknown. A file of HF arguments checked by itself
    (`alone`: alignment-handbook's, TRL's, open-instruct's): the script that parses it and the command that starts it
    (`accelerate launch --config_file zero3.yaml --mixed_precision bf16 script.py recipe.yaml`) are not in view.
    LLaMA-Factory v1's, wherever it is seen from: its trainer's defaults are not modelled. None for the other
    LLaMA-Factory and axolotl recipes, whose framework is known by their keys, and for a file a command in view
    reads."""
    if owner is frameworks.LLAMAFACTORY_V1:
        return LLAMAFACTORY_V1_UNMODELLED
    if owner is not frameworks.HF_ARGUMENTS or not alone:
        return None
    return "the file of arguments is checked by itself: the script that reads it and the command that starts it " \
           "are not in view"


def recipe_run(recipe: Path, workspace: Workspace) -> TrainingRun:
    """A recipe named on the command line by itself (a LLaMA-Factory or axolotl YAML)."""
    config = workspace.config(recipe)
    whole = Origin(config.path, 1, 1, 1, 1, 0, 0)
    launch = Launch(recipe_framework(config.values).launcher, whole, (), None, False, ())
    build = JobBuild(launch, recipe, workspace)
    add_recipe(build, recipe, alone=True)
    return _finish(build, config.path, run_id=config.path)


def _axolotl_run(build: JobBuild, dirs: Sequence[Path]) -> TrainingRun:
    """`axolotl train recipe.yml [overrides] [-- launcher args]`, `accelerate launch -m axolotl.cli.train
    recipe.yml [--key value]`: the recipe with the command line's values over it, on the processes the
    launcher axolotl runs starts."""
    launch = build.launch
    command = axolotl_cli.read_command(launch)
    build.job_launcher = Launcher.AXOLOTL
    recipe: Optional[Path] = None
    config = command.config
    if config is not None and isinstance(config.value, str):
        # axolotl opens the config from the directory it runs in, and deployment templates write it there
        # before they start (`train.yaml`): one not in the tree is unknown, not missing.
        located = locate_script(build.workspace, config.value, dirs, launch.cwd_unknown)
        recipe = located.path
        build.entry_shown = located.shown if recipe is not None else f"{config.value} (not in the scanned tree)"
    values = build.workspace.config(recipe).values if recipe is not None else {}
    overrides = axolotl_cli.applied_overrides(command, list(values), values.get("strict"))
    if command.sweep is not None:
        sweep = build.workspace.find(command.sweep.value, dirs) if isinstance(command.sweep.value, str) else None
        swept = list(build.workspace.config(sweep).values) if sweep is not None else None
        overrides.extend(axolotl_cli.sweep_overrides(command, swept))
    use_ray = next((value for key, value in reversed(overrides) if key == "use_ray"), values.get("use_ray"))
    unknown = axolotl_cli.unknown_world(command, use_ray)
    if unknown is not None:
        build.candidates.add(K.WORLD_SIZE, unknown)
    else:
        build.launch = replace(launch, launcher=command.launcher, launcher_args=command.launcher_args)
        _world(build, dirs, visible_decides=launch.launcher == Launcher.AXOLOTL)
    _environment(build)
    allocator_set = {"PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"} & set(launch.env)
    if launch.launcher == Launcher.AXOLOTL and not allocator_set:
        # The `axolotl` command sets the allocator to expandable segments before it starts anything.
        build.candidates.add(K.ALLOC_CONF, Setting("expandable_segments:True", SourceKind.FRAMEWORK_DEFAULT,
                                                   note="set by the axolotl command"))
    add_recipe(build, recipe, overrides, owner=AXOLOTL)
    return _finish(build, display_path(build.script_path))


def _swift_run(build: JobBuild, dirs: Sequence[Path], entry_command: Optional[str] = None) -> TrainingRun:
    """`swift sft|pt|rlhf [config] --flag value ...`: the flags, over a config file named first (ms-swift 4.1 on)
    or under one `--config` names (3.10 to 4.0, whose keys win), with ms-swift's defaults; the processes are
    the ones ms-swift's torchrun starts. `entry_command`: the command whose entry script (`swift/cli/sft.py`) a
    launcher of its own starts, with the processes it starts; it is ms-swift's, not a script of the tree."""
    launch = build.launch
    parsed, positionals = parse_flags(launch.script_args, lambda name: name.replace("-", "_") in swift.SWITCHES)
    flags = last_by_name(parsed)
    build.flags = tuple((flag.name, flag.flag) for flag in parsed)
    if entry_command is None:
        command = str(positionals[0].value) if positionals else "sft"
        positionals = positionals[1:]
        build.entry_shown = f"swift {command}"
    else:
        command = entry_command
        build.entry_shown = f"{launch.entry.value} (swift {command})"
    written = {name.replace("-", "_"): setting for name, setting in _recipe_overrides(flags, ())}
    kept = written
    config = _swift_config(build, flags, positionals[:1], dirs)
    if config is not None:
        path, file_wins = config
        file = build.workspace.config(path)
        kept = {key: setting for key, setting in written.items() if not (file_wins and key in file.values)}
        build.inputs.read_config(file, SWIFT, overridden=() if file_wins else tuple(kept))
        written = {**file.values, **kept}
        environment = {key[len("ENV."):]: setting for key, setting in file.values.items() if key.startswith("ENV.")}
        # The config's ENV block is exported before ms-swift starts torchrun; the caller's environment wins.
        build.launch = launch = replace(launch, env={**environment, **launch.env})
    for name, setting in kept.items():
        knob = knob_for(name, SWIFT)
        if knob is not None:
            build.candidates.add(knob, setting)
    _world(build, dirs)
    _environment(build)
    HF_TRAINER.defaults(written, build.candidates)
    release = build.workspace.pin_above(build.workspace.resolved(build.script_path).parent, "ms-swift")
    swift.apply(swift.SwiftCommand(command, written, release, launch.env, launch.launcher), build.candidates)
    named = build.candidates.winner(K.DEEPSPEED)
    if named is not None and isinstance(named.value, str) and named.value.lstrip().startswith("{"):
        build.candidates.add(K.ZERO_STAGE, Setting(Unknown("the DeepSpeed config is inline JSON"), SourceKind.DERIVED,
                                                   None, via=(named,)))
    elif named is None or not swift.preset_config(build.candidates, named, release):
        deepspeed.apply_chosen_config(build.inputs, build.workspace, (), dirs, deepspeed.ConfigView(
            cwd_unknown=launch.cwd_unknown))
    return _finish(build, display_path(build.script_path))


def _swift_config(build: JobBuild, flags: Flags, first: Sequence[Setting],
                  dirs: Sequence[Path]) -> Optional[Tuple[Path, bool]]:
    """The config file a `swift` command names, and whether its keys win over the flags (`--config`)."""
    named = flags.get("config")
    word = named.value if named is not None else next(
        (w for w in first if isinstance(w.value, str) and w.value.endswith(swift.CONFIG_SUFFIXES)), None)
    if word is None or not isinstance(word.value, str):
        return None
    located = locate_script(build.workspace, word.value, dirs, build.launch.cwd_unknown)
    if located.path is None:
        # Its keys are not read: what they set stays at ms-swift's defaults, each the lower side of memory.
        build.entry_shown = f"{build.entry_shown} with {located.shown}"
        if located.exists is False:  # not one outside the tree or relative to a directory not known
            build.candidates.diagnostics.append(Diagnostic(
                "missing-file", f"the config `{word.value}` does not exist", display_path(build.script_path),
                word.origin))
        return None
    build.recipe = display_path(located.path)
    return located.path, named is not None


# ---------------------------------------------------------------- entry scripts alone

def python_run(script: Path, workspace: Workspace) -> Optional[TrainingRun]:
    """An entry script named by itself: the values its own defaults and code give."""
    shown = display_path(script)
    facts = collect(script, workspace, workspace.search_dirs(script, None))
    if not facts.is_training:
        return None
    launch = Launch(Launcher.PYTHON, Origin(shown, 1, 1, 1, 1, 0, 0), (), Setting(shown, SourceKind.ASSUMED), False, ())
    build = JobBuild(launch, script, workspace, facts=facts, entry_shown=shown, entry_exists=True)
    build.inputs.files.extend(m.path for m in facts.modules)
    code_settings(facts, {}, build.candidates)
    build.compute_metrics = compute_metrics(facts, {})
    dirs = workspace.search_dirs(script, None)
    deepspeed.apply_chosen_config(build.inputs, workspace, launch.launcher_args, dirs)
    build.candidates.add(K.WORLD_SIZE, Setting(Unknown("the script was named without its launcher"),
                                               SourceKind.DERIVED))
    if facts.uses_hf_trainer:
        _hf_defaults(build, {})
    return _finish(build, shown, run_id=shown)


def _hf_defaults(build: JobBuild, written: Dict[str, Setting]) -> None:
    """TrainingArguments' defaults, and over them those of the TRL config the script's arguments are, by the trl
    release the repository pins."""
    HF_TRAINER.defaults(written, build.candidates)
    folder = build.workspace.resolved(build.script_path).parent
    apply_trl_defaults(build.facts.trl_config if build.facts else None, build.workspace, folder, build.candidates)


# ---------------------------------------------------------------- the run

_DEFAULT_KINDS = (SourceKind.DATACLASS_DEFAULT, SourceKind.ARGPARSE_DEFAULT, SourceKind.PARAMETER_DEFAULT)


def _unset_by_default(setting: Optional[Setting]) -> bool:
    return setting is not None and setting.kind in _DEFAULT_KINDS \
        and setting.value in _EMPTY_VALUES


def _eval_dataset(facts: Optional[EntryFacts],
                  settings: Dict[str, Setting]) -> Tuple[Optional[bool], Optional[Setting]]:
    """Whether the trainer gets an eval dataset, and the setting that says so."""
    eval_dataset, eval_where = (None, None)
    if facts is not None:
        eval_dataset, eval_where = eval_dataset_fact(facts)
    eval_data = settings.get(K.EVAL_DATA)
    written = eval_data is not None and eval_data.kind != SourceKind.FRAMEWORK_DEFAULT
    if written and eval_data.value not in _EMPTY_VALUES:
        eval_dataset = True if eval_dataset is not False or not facts else eval_dataset
        eval_where = eval_data
    elif eval_dataset is None and _unset_by_default(eval_data):
        # The script's own eval-data argument is left at its empty default: whatever the trainer is
        # handed through `**data_module`, it is built from nothing.
        eval_dataset, eval_where = False, eval_data
    return eval_dataset, eval_where


def _run_facts(build: JobBuild, settings: Dict[str, Setting]) -> RunFacts:
    facts = build.facts
    eval_dataset, eval_where = _eval_dataset(facts, settings)
    return RunFacts(
        entry_exists=build.entry_exists,
        eval_dataset=eval_dataset,
        eval_dataset_origin=eval_where.origin if eval_where is not None else None,
        compute_metrics=build.compute_metrics,
        own_trainer=facts is not None and facts.calls_own_trainer,
        own_loop_trainer=facts is not None and facts.own_loop_trainer is not None,
        reduces_logits=bool(facts is not None and any(
            c.preprocess_logits is not None and c.preprocess_logits.value is not None for c in facts.trainer_calls)),
        accepted_flags=facts.accepted_flags() if facts else None,
        own_flags=facts.own_flags() if facts else frozenset(),
        parse_known_args=facts.parse_known_args if facts else False,
        fire_command=facts is not None and facts.fire_command,
        known_args_rest_used=facts.known_args_rest_used if facts else False,
        python_files=tuple(m.path for m in facts.modules) if facts else (),
        flags=build.flags,
        batch_multiplier=build.batch_multiplier,
        transformers_pin=transformers_pin(build.workspace, build.script_path, facts.path if facts else None),
        transformers_ceiling=transformers_ceiling(build.workspace, build.script_path, facts.path if facts else None),
        visible_devices=build.launch.env.get("CUDA_VISIBLE_DEVICES"),
        flag_spellings=build.flag_spellings,
        refused_prefixes=build.refused_prefixes,
        misspelled_options=build.misspelled_options,
        argparse_options=facts.argparse_options() if facts else (),
        adapters_without_input_grads=adapters_without_input_grads(facts),
        imports_diffusers=facts is not None and any(info.module.split(".")[0] == "diffusers"
                                                    for module in facts.modules for info in module.imports),
    )


def _own_loop(build: JobBuild) -> None:
    """A job trained by a class of the repository's own that is no HF Trainer (LOMO's fused-update optimizer, no
    optimizer states) holds what its code builds: out of the memory model's scope."""
    call = build.facts.own_loop_trainer if build.facts is not None else None
    if call is not None:
        written = Setting(call.callee, SourceKind.DERIVED, call.origin)
        add_out_of_scope(build.candidates, written, f"the job trains with `{call.callee}`, a trainer of the "
                                                    "repository's own that is no HF Trainer: its optimizer and "
                                                    "sharding are what its code builds")


def _finish(build: JobBuild, shown_script: str, run_id: Optional[str] = None) -> TrainingRun:
    _own_loop(build)
    frameworks.derive(build.candidates, DeriveContext(build.launch.launcher, tuple(build.launch.launcher_args)))
    settings, pins = build.candidates.resolve()
    run_facts = _run_facts(build, settings)
    diagnostics = list(build.candidates.diagnostics)
    if build.facts is not None:
        diagnostics.extend(build.facts.diagnostics)
    origin = build.launch.origin
    calls = ", ".join(f"line {call.line}" for call in build.launch.called_at)
    return TrainingRun(
        # A command that functions run with other arguments from each call is a job per call.
        id=run_id or f"{shown_script}:{origin.line}" + (f" (called at {calls})" if calls else ""),
        path=shown_script,
        launcher=build.job_launcher or build.launch.launcher,
        origin=origin,
        entry=build.entry_shown,
        settings=settings,
        pins=pins,
        recipe=build.recipe,
        files=tuple(dict.fromkeys(build.inputs.files)),
        configs=tuple(dict.fromkeys(build.inputs.configs)),
        diagnostics=tuple(diagnostics),
        facts=run_facts,
    )
