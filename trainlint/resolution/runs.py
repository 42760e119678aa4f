"""From a launch command (or a recipe) to a TrainingRun: every knob with its winning value."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from trainlint.core import (
    Diagnostic,
    Origin,
    RunFacts,
    Setting,
    SourceKind,
    TrainingRun,
    Unknown,
)
from trainlint.knobs import ACCELERATE, ARGS, AXOLOTL, DEEPSPEED, HF_BOOL_FIELDS, KNOBS, coerce, knob_for
from trainlint.readers.facts import ConfigFile, Keyword, Launch
from trainlint.readers.source import display_path
from trainlint.resolution.entry import EntryFacts, collect, eval_dataset_fact
from trainlint.resolution.flags import key_value, last_by_name, option_value, parse_flags
from trainlint.resolution.sharding import derive_fsdp
from trainlint.resolution.workspace import Workspace, transformers_pin
from trainlint.resolution.world import world_size

# Higher wins. Code that rewrites a setting after parsing beats everything the user passed.
PRECEDENCE = {
    SourceKind.CODE_OVERRIDE: 90,
    SourceKind.LAUNCHER_FLAG: 80,
    SourceKind.CONFIG_FILE: 70,
    SourceKind.CODE_KEYWORD: 60,
    SourceKind.DATACLASS_DEFAULT: 50,
    SourceKind.ARGPARSE_DEFAULT: 40,
    SourceKind.ENVIRONMENT: 35,
    SourceKind.DERIVED: 30,
    SourceKind.SBATCH: 25,
    SourceKind.FRAMEWORK_DEFAULT: 10,
    SourceKind.ASSUMED: 0,
}

KNOB_TYPES = {spec.name: spec.type for spec in KNOBS}
_TRAINING_FLAG_KNOBS = {"per_device_train_batch_size", "gradient_accumulation_steps", "deepspeed",
                        "gradient_checkpointing", "max_seq_length", "global_batch_size"}


@dataclass
class _Candidates:
    """Every place that pins each knob, before choosing the winner."""

    by_knob: Dict[str, List[Setting]] = field(default_factory=dict)
    diagnostics: List[Diagnostic] = field(default_factory=list)

    def add(self, knob_name: str, setting: Setting) -> None:
        coerced = coerce(knob_name, setting.value)
        if coerced.error and setting.origin is not None:
            self.diagnostics.append(Diagnostic(
                "invalid-value", f"{knob_name} is set to {coerced.error}", setting.origin.path, setting.origin))
        if knob_name == "eval_strategy" and isinstance(coerced.value, str):
            coerced = replace(coerced, value=coerced.value.lower().replace("intervalstrategy.", ""))
        self.by_knob.setdefault(knob_name, []).append(replace(setting, value=coerced.value))

    def winner(self, knob_name: str) -> Optional[Setting]:
        found = self.by_knob.get(knob_name)
        return by_precedence(found)[0] if found else None

    def resolve(self) -> Tuple[Dict[str, Setting], Dict[str, Tuple[Setting, ...]]]:
        pins = {name: tuple(by_precedence(found)) for name, found in self.by_knob.items()}
        return {name: ordered[0] for name, ordered in pins.items()}, pins


def by_precedence(settings: Sequence[Setting]) -> List[Setting]:
    """Highest precedence first; among equals the later-written (a repeated flag) first."""
    return sorted(reversed(settings), key=lambda s: -PRECEDENCE[s.kind])


def _keyword_setting(keyword: Keyword, argparse_values: Dict[str, Setting]) -> Setting:
    if keyword.reference is None:
        return keyword.setting
    source = argparse_values.get(keyword.reference)
    if source is None:
        return keyword.setting
    value = source.value
    if keyword.negated:
        truth = coerce("bf16", value).value
        value = (not truth) if isinstance(truth, bool) else Unknown(f"`not {keyword.reference}` of an unknown value")
    # The keyword's value comes from the parsed argument: the argument's origin is where to edit.
    return Setting(value, source.kind, source.origin, source.text, via=source.via, note=keyword.name)


def _config_values(config: ConfigFile, namespace: str, candidates: _Candidates) -> None:
    for key, setting in config.values.items():
        name = knob_for(key, namespace)
        if name is not None:
            candidates.add(name, setting)
    for key, items in _scalar_lists(config).items():
        name = knob_for(key, namespace)
        if name is not None and KNOB_TYPES.get(name) is str and key not in config.values:
            # `fsdp: [full_shard, auto_wrap]` means what the string `full_shard auto_wrap` means.
            joined = " ".join(str(item.value) for item in items)
            candidates.add(name, replace(items[0], value=joined, via=tuple(items[1:]), note=key))


def _scalar_lists(config: ConfigFile) -> Dict[str, List[Setting]]:
    """YAML lists of plain values, read back from their flattened `key.0`, `key.1` entries."""
    lists: Dict[str, List[Setting]] = {}
    for key, setting in config.values.items():
        head, _, index = key.rpartition(".")
        if head and index.isdigit() and isinstance(setting.value, (str, int, float)):
            lists.setdefault(head, []).append(setting)
    return lists


def _apply_deepspeed(path: Optional[Path], shown: str, origin_setting: Setting, workspace: Workspace,
                     candidates: _Candidates, files: List[str], configs: List[str]) -> None:
    if path is None:
        candidates.diagnostics.append(Diagnostic(
            "missing-file", f"the DeepSpeed config `{shown}` does not exist", origin_setting.origin.path
            if origin_setting.origin else shown, origin_setting.origin))
        return
    config = workspace.config(path)
    files.append(config.path)
    configs.append(config.path)
    candidates.diagnostics.extend(config.diagnostics)
    _config_values(config, DEEPSPEED, candidates)
    if "zero_optimization.stage" not in config.values:
        candidates.add("zero_stage", Setting(0, SourceKind.DERIVED, None, note=f"{config.path} has no ZeRO stage"))


def _framework_defaults(candidates: _Candidates) -> None:
    for spec in KNOBS:
        if spec.default is not None and DEEPSPEED not in spec.spellings:
            candidates.add(spec.name, Setting(spec.default, SourceKind.FRAMEWORK_DEFAULT, None,
                                              note="HF TrainingArguments default"))


@dataclass
class _Build:
    launch: Launch
    script_path: Path
    workspace: Workspace
    candidates: _Candidates = field(default_factory=_Candidates)
    files: List[str] = field(default_factory=list)
    configs: List[str] = field(default_factory=list)
    facts: Optional[EntryFacts] = None
    entry_shown: Optional[str] = None
    entry_exists: Optional[bool] = None
    flags: Tuple[Tuple[str, Setting], ...] = ()
    batch_multiplier: Optional[Setting] = None


def _resolve_entry(build: _Build, dirs: Sequence[Path]) -> Optional[Path]:
    launch = build.launch
    entry = launch.entry
    if entry is None or not isinstance(entry.value, str):
        return None
    if launch.entry_is_module:
        found = build.workspace.module(entry.value, build.script_path, dirs)
        build.entry_shown = display_path(found) if found else entry.value
        return found
    found = build.workspace.find(entry.value, dirs)
    build.entry_shown = display_path(found) if found else entry.value
    return found


_DISTRIBUTED_LAUNCHERS = ("deepspeed", "torchrun", "torch.distributed.run", "torch.distributed.launch", "accelerate")


def _looks_like_training(flags: Dict[str, object], facts: Optional[EntryFacts]) -> bool:
    if facts is not None and facts.is_training:
        return True
    return any(knob_for(name) in _TRAINING_FLAG_KNOBS for name in flags)


def build_run(launch: Launch, script_path: Path, workspace: Workspace) -> Optional[TrainingRun]:
    """The run a launch starts, or None when it does not look like training (an eval loop)."""
    build = _Build(launch, script_path, workspace)
    dirs = workspace.search_dirs(script_path, launch.cwd)
    shown_script = display_path(script_path)
    build.files.append(shown_script)
    entry_path = _resolve_entry(build, dirs)
    if entry_path is not None and entry_path.suffix == ".py":
        build.facts = collect(entry_path, workspace, dirs)
        build.entry_exists = True
        build.files.extend(m.path for m in build.facts.modules)
    elif launch.entry is not None and isinstance(launch.entry.value, str) and entry_path is None:
        build.entry_exists = False

    is_bool = build.facts.is_bool if build.facts else (lambda name: name.replace("-", "_") in HF_BOOL_FIELDS)
    parsed, positionals = parse_flags(launch.script_args, is_bool)
    flags = last_by_name(parsed)
    build.flags = tuple((flag.name, flag.flag) for flag in parsed)
    if launch.launcher == "llamafactory-cli" or (entry_path is not None and entry_path.suffix in (".yaml", ".yml")):
        return _recipe_run(build, entry_path, flags, positionals, dirs)
    recipe = _recipe_argument(build, positionals, dirs) if entry_path is not None else None
    if recipe is not None:
        # `accelerate launch src/train.py recipe.yaml`: the script hands the file to its parser.
        if build.facts is not None:
            _code_settings(build, {})
        return _recipe_run(build, recipe, flags, positionals[1:], dirs)
    # A distributed launch of a script that is gone is reported whatever its flags: it cannot start.
    gone_distributed = build.entry_exists is False and launch.launcher in _DISTRIBUTED_LAUNCHERS
    if not (gone_distributed or _looks_like_training(flags, build.facts)):
        return None
    if build.entry_exists is False:
        build.candidates.diagnostics.append(Diagnostic(
            "missing-file", f"the entry script `{launch.entry.value}` does not exist (looked in "
            f"{', '.join(display_path(d) or '.' for d in dirs[:3])})", shown_script, launch.entry.origin))
    _launcher_settings(build, flags)
    _code_settings(build, flags)
    build.batch_multiplier = _data_batch(build, flags)
    _deepspeed_config(build, flags, dirs)
    _world(build, flags, dirs)
    _environment(build)
    if build.facts is None or build.facts.uses_hf_trainer:
        _framework_defaults(build.candidates)
    return _finish(build, shown_script)


def _launcher_settings(build: _Build, flags) -> None:
    facts = build.facts
    accepted = facts.accepted_flags() if facts else None
    for name, flag in flags.items():
        normalized = name.replace("-", "_")
        if facts is not None and normalized in facts.option_dest:
            continue  # an argparse flag: it reaches knobs through keywords (below)
        if accepted is not None and normalized not in accepted and name not in accepted and facts.parse_known_args:
            continue  # parse_known_args drops it silently
        target = knob_for(name)
        if target is not None:
            build.candidates.add(target, replace(flag.value, kind=SourceKind.LAUNCHER_FLAG, note=f"--{name}"))


# A data-arguments field of this name packs several samples into each item the trainer batches
# (InternLM-XComposer's data mix): the trainer's batch counts items, not samples.
_DATA_BATCH_FIELDS = ("batch_size",)


def _data_batch(build: _Build, flags) -> Optional[Setting]:
    facts = build.facts
    if facts is None:
        return None
    for name in _DATA_BATCH_FIELDS:
        item = facts.plain_fields.get(name)
        if item is None:
            continue
        flag = flags.get(name)
        if flag is not None:
            coerced = coerce("per_device_train_batch_size", flag.value.value)
            return replace(flag.value, value=coerced.value, kind=SourceKind.LAUNCHER_FLAG, note=f"--{name}")
        return item.default
    return None


def _argparse_values(build: _Build, flags) -> Dict[str, Setting]:
    facts = build.facts
    values: Dict[str, Setting] = {}
    if facts is None:
        return values
    for dest, arg in facts.argparse.items():
        if arg.default is not None:
            values[dest] = arg.default
    for name, flag in flags.items():
        dest = facts.option_dest.get(name) or facts.option_dest.get(name.replace("-", "_"))
        if dest is not None:
            values[dest] = replace(flag.value, kind=SourceKind.LAUNCHER_FLAG, note=f"--{name}")
    return values


def _code_settings(build: _Build, flags) -> None:
    facts = build.facts
    if facts is None:
        return
    argparse_values = _argparse_values(build, flags)
    for keyword in facts.config_keywords:
        target = knob_for(keyword.name)
        if target is not None:
            build.candidates.add(target, _keyword_setting(keyword, argparse_values))
    # Arguments the script reads directly (`--seq-length`, Megatron-style names) for knobs no
    # TrainingArguments keyword sets; a flag given on the command line was added above.
    keyword_knobs = {knob_for(k.name) for k in facts.config_keywords}
    for dest, setting in argparse_values.items():
        target = knob_for(dest)
        if target is not None and target not in keyword_knobs:
            build.candidates.add(target, setting)
    for name, item in facts.fields.items():
        target = knob_for(name)
        if target is not None and item.default is not None:
            build.candidates.add(target, item.default)
    for override in facts.overrides:
        target = knob_for(override.name)
        if target is None or _copies_argument(override):
            continue
        setting = replace(override.setting, kind=SourceKind.CODE_OVERRIDE)
        if override.when is not None:
            gated = _gated_override(build, flags, argparse_values, override, setting)
            if gated is None:
                continue  # the branch does not run: the override never happens
            setting = gated
        build.candidates.add(target, setting)
    for callee, keyword in facts.other_keywords:
        target = knob_for(keyword.name)
        if target in ("attn_implementation", "load_in_4bit", "load_in_8bit", "lora_r") or (
                callee.endswith("Accelerator") and target == "gradient_accumulation_steps"):
            build.candidates.add(target, replace(_keyword_setting(keyword, argparse_values),
                                                 kind=SourceKind.CODE_KEYWORD))
        if callee == "get_peft_model":
            # A call says adapters may be used; an explicit switch (a flag, a default) says when.
            build.candidates.add("lora", Setting(Unknown("get_peft_model is called in code"), SourceKind.DERIVED,
                                                 keyword.setting.origin, note="get_peft_model"))


def _copies_argument(override) -> bool:
    """`training_args.x = model_args.x`: the same argument copied between namespaces, which the
    knob (one name across every argument class) already holds."""
    text = override.setting.text.strip()
    head, dot, attribute = text.rpartition(".")
    return bool(dot) and head.isidentifier() and attribute == override.name


def _argument_value(build: _Build, flags, argparse_values: Dict[str, Setting], name: str) -> Optional[Setting]:
    """The value the entry script's parsed argument `name` gets: a launcher flag, else its default."""
    flag = flags.get(name) or flags.get(name.replace("_", "-"))
    if flag is not None:
        return replace(flag.value, kind=SourceKind.LAUNCHER_FLAG, note=f"--{flag.name}")
    if name in argparse_values:
        return argparse_values[name]
    item = build.facts.fields.get(name) if build.facts else None
    return item.default if item is not None else None


def _gated_override(build: _Build, flags, argparse_values: Dict[str, Setting], override,
                    setting: Setting) -> Optional[Setting]:
    """An override under `if args.flag:`: it applies when the flag is on (off when negated), never
    when the flag says the branch is skipped, and stays Unknown when the flag cannot be told."""
    gate = _argument_value(build, flags, argparse_values, override.when)
    truth = coerce("bf16", gate.value).value if gate is not None else None
    if not isinstance(truth, bool):
        return setting
    if truth == override.when_negated:
        return None
    return replace(setting, value=override.when_value, via=(gate,),
                   note=f"{setting.note} (runs because {override.when} is {gate.text or gate.value})")


def _deepspeed_config(build: _Build, flags, dirs: Sequence[Path]) -> None:
    chosen = build.candidates.by_knob.get("deepspeed")
    if not chosen:
        accelerate_config = option_value(build.launch.launcher_args, "config_file")
        if accelerate_config is None:
            build.candidates.add("zero_stage", Setting(0, SourceKind.DERIVED, None, note="no DeepSpeed config"))
        return
    winner = by_precedence(chosen)[0]
    if winner.value is None or winner.value == "":
        build.candidates.add("zero_stage", Setting(0, SourceKind.DERIVED, None, note="no DeepSpeed config",
                                                   via=(winner,)))
        return
    if not isinstance(winner.value, str):
        build.candidates.add("zero_stage", Setting(Unknown("the DeepSpeed config path is not known"),
                                                   SourceKind.DERIVED, None, via=(winner,)))
        return
    path = build.workspace.find(winner.value, dirs)
    _apply_deepspeed(path, winner.value, winner, build.workspace, build.candidates, build.files, build.configs)


def _world(build: _Build, flags, dirs: Sequence[Path]) -> None:
    launch = build.launch
    sbatch = build.workspace.shell(build.script_path).sbatch if build.script_path.suffix.lower() in (
        ".sh", ".bash", ".slurm", ".sbatch", "") else {}
    size = world_size(launch, sbatch)
    if launch.launcher == "accelerate":
        config_setting = option_value(launch.launcher_args, "config_file")
        if config_setting is not None and isinstance(config_setting.value, str):
            path = build.workspace.find(config_setting.value, dirs)
            if path is not None:
                config = build.workspace.config(path)
                build.files.append(config.path)
                build.configs.append(config.path)
                build.candidates.diagnostics.extend(config.diagnostics)
                _config_values(config, ACCELERATE, build.candidates)
                ds_file = config.values.get("deepspeed_config.deepspeed_config_file")
                if ds_file is not None and isinstance(ds_file.value, str):
                    _apply_deepspeed(build.workspace.find(ds_file.value, dirs), ds_file.value, ds_file,
                                     build.workspace, build.candidates, build.files, build.configs)
        if size is None and "world_size" not in build.candidates.by_knob:
            size = Setting(Unknown("accelerate uses its default config for the process count"), SourceKind.DERIVED)
    if size is not None:
        build.candidates.add("world_size", size)
    for name in ("nnodes", "num_nodes"):
        nodes = option_value(launch.launcher_args, name)
        if nodes is not None:
            build.candidates.add("num_nodes", replace(nodes, kind=SourceKind.LAUNCHER_FLAG))


def _environment(build: _Build) -> None:
    alloc = build.launch.env.get("PYTORCH_CUDA_ALLOC_CONF")
    if alloc is not None:
        build.candidates.add("alloc_conf", replace(alloc, kind=SourceKind.ENVIRONMENT))


_RECIPE_MARKERS = ("per_device_train_batch_size", "micro_batch_size", "model_name_or_path", "base_model")
_DEEPSPEED_MARKERS = ("zero_optimization", "train_micro_batch_size_per_gpu", "train_batch_size")


def _recipe_argument(build: _Build, positionals: Sequence, dirs: Sequence[Path]) -> Optional[Path]:
    """The YAML/JSON arguments file an entry script is given as its first positional argument
    (`train.py recipe.yaml`, read by HfArgumentParser.parse_yaml_file or LLaMA-Factory), if any."""
    if not positionals or not isinstance(positionals[0].value, str):
        return None
    written = positionals[0].value
    if Path(written).suffix.lower() not in (".yaml", ".yml", ".json"):
        return None
    path = build.workspace.find(written, dirs)
    if path is None:
        return None
    keys = build.workspace.config(path).values
    roots = {key.split(".", 1)[0] for key in keys}
    if roots & set(_DEEPSPEED_MARKERS) or not roots & set(_RECIPE_MARKERS):
        return None
    return path


def _recipe_overrides(flags, positionals: Sequence) -> List[Tuple[str, Setting]]:
    """Arguments given next to (or instead of) a recipe: `--cutoff_len 1024` and `cutoff_len=1024`."""
    found: List[Tuple[str, Setting]] = []
    for word in positionals:
        pair = key_value(word)
        if pair is not None:
            found.append((pair[0], replace(pair[1], kind=SourceKind.LAUNCHER_FLAG, note=pair[0])))
    for name, flag in flags.items():
        found.append((name, replace(flag.value, kind=SourceKind.LAUNCHER_FLAG, note=f"--{name}")))
    return found


def _recipe_run(build: _Build, recipe: Optional[Path], flags, positionals: Sequence = (),
                dirs: Sequence[Path] = ()) -> Optional[TrainingRun]:
    """`llamafactory-cli train recipe.yaml key=value`, `llamafactory-cli train --flag v ...`,
    `torchrun train.py recipe.yaml`: the recipe and the arguments next to it hold the settings."""
    shown_script = display_path(build.script_path)
    if recipe is None and build.launch.entry is not None:
        build.candidates.diagnostics.append(Diagnostic(
            "missing-file", f"the recipe `{build.launch.entry.value}` does not exist", shown_script,
            build.launch.entry.origin))
        return _finish(build, shown_script)
    _world(build, flags, dirs)
    add_recipe(build, recipe, _recipe_overrides(flags, positionals))
    return _finish(build, shown_script)


def add_recipe(build: _Build, recipe: Optional[Path], overrides: Sequence[Tuple[str, Setting]] = ()) -> None:
    values: Dict[str, Setting] = {}
    namespace = ARGS
    if recipe is not None:
        config = build.workspace.config(recipe)
        build.files.append(config.path)
        build.configs.append(config.path)
        build.candidates.diagnostics.extend(config.diagnostics)
        namespace = AXOLOTL if "micro_batch_size" in config.values or "base_model" in config.values else ARGS
        _config_values(config, namespace, build.candidates)
        values.update(config.values)
        dirs = build.workspace.search_dirs(recipe, None)
    else:
        dirs = build.workspace.search_dirs(build.script_path, build.launch.cwd)
    for key, setting in overrides:
        values[key] = setting
        name = knob_for(key, namespace)
        if name is not None:
            build.candidates.add(name, setting)
    _deepspeed_config(build, {}, dirs)
    if "world_size" not in build.candidates.by_knob:
        build.candidates.add("world_size", Setting(Unknown("the recipe runs on every visible GPU"), SourceKind.DERIVED))
    _framework_defaults(build.candidates)
    if namespace == ARGS:
        _llamafactory_defaults(values, build.candidates)
    else:
        _axolotl_defaults(values, build.candidates)


def _llamafactory_defaults(values: Mapping[str, Setting], candidates: _Candidates) -> None:
    """LLaMA-Factory turns gradient checkpointing on unless `disable_gradient_checkpointing: true`."""
    disabled = values.get("disable_gradient_checkpointing")
    if disabled is not None and coerce("gradient_checkpointing", disabled.value).value is True:
        candidates.add("gradient_checkpointing", replace(disabled, value=False, note="disable_gradient_checkpointing"))
    else:
        candidates.add("gradient_checkpointing", Setting(True, SourceKind.FRAMEWORK_DEFAULT, None,
                                                         note="LLaMA-Factory default"))


def _axolotl_defaults(values: Mapping[str, Setting], candidates: _Candidates) -> None:
    """axolotl evaluates whenever a validation split is set: every `eval_steps`, else per epoch.
    Unset, its eval batch is the micro-batch and it trains one epoch."""
    micro = values.get("micro_batch_size")
    if micro is not None and "eval_batch_size" not in values:
        candidates.add("per_device_eval_batch_size", Setting(micro.value, SourceKind.DERIVED, None, via=(micro,),
                                                             note="axolotl: eval_batch_size = micro_batch_size"))
    if "num_epochs" not in values:
        candidates.add("num_train_epochs", Setting(1, SourceKind.FRAMEWORK_DEFAULT, None, note="axolotl default"))
    split = values.get("val_set_size")
    if split is None or not isinstance(split.value, (int, float)) or split.value <= 0:
        return
    strategy = "steps" if "eval_steps" in values or "evals_per_epoch" in values else "epoch"
    candidates.add("eval_strategy", replace(split, value=strategy, via=(split,), note=f"val_set_size {split.value}"))
    per_epoch = values.get("evals_per_epoch")
    if per_epoch is not None and "eval_steps" not in values:
        candidates.add("eval_steps", _axolotl_eval_ratio(per_epoch, values.get("num_epochs")))


def _axolotl_eval_ratio(per_epoch: Setting, epochs: Optional[Setting]) -> Setting:
    """axolotl turns `evals_per_epoch` into `eval_steps = 1 / (evals_per_epoch × num_epochs)`, a
    fraction of the run's steps (num_epochs defaults to 1)."""
    count = coerce("max_steps", per_epoch.value).value
    epoch_count = coerce("num_train_epochs", epochs.value).value if epochs is not None else 1
    via = tuple(s for s in (per_epoch, epochs) if s is not None)
    if not isinstance(count, int) or isinstance(epoch_count, (Unknown, str)) or epoch_count is None \
            or count <= 0 or epoch_count <= 0:
        return Setting(Unknown("axolotl computes eval_steps from evals_per_epoch and num_epochs"),
                       SourceKind.DERIVED, None, via=via, note="evals_per_epoch")
    ratio = 1.0 / (count * epoch_count)
    if ratio >= 1:
        return Setting(Unknown(f"evals_per_epoch {count} over {epoch_count} epochs gives no step interval"),
                       SourceKind.DERIVED, None, via=via, note="evals_per_epoch")
    return Setting(ratio, SourceKind.DERIVED, None, via=via,
                   note=f"1 / (evals_per_epoch {count} × num_epochs {epoch_count})")


def recipe_run(recipe: Path, workspace: Workspace) -> TrainingRun:
    """A recipe named on the command line by itself (a LLaMA-Factory or axolotl YAML)."""
    config = workspace.config(recipe)
    whole = Origin(config.path, 1, 1, 1, 1, 0, 0)
    launcher = "axolotl" if "micro_batch_size" in config.values or "base_model" in config.values else "llamafactory-cli"
    launch = Launch(launcher, whole, (), None, False, ())
    build = _Build(launch, recipe, workspace)
    add_recipe(build, recipe)
    return _finish(build, config.path, run_id=config.path)


def python_run(script: Path, workspace: Workspace) -> Optional[TrainingRun]:
    """An entry script named by itself: the values its own defaults and code give."""
    shown = display_path(script)
    facts = collect(script, workspace, workspace.search_dirs(script, None))
    if not facts.is_training:
        return None
    launch = Launch("python", Origin(shown, 1, 1, 1, 1, 0, 0), (), Setting(shown, SourceKind.ASSUMED), False, ())
    build = _Build(launch, script, workspace, facts=facts, entry_shown=shown, entry_exists=True)
    build.files.extend(m.path for m in facts.modules)
    _code_settings(build, {})
    dirs = workspace.search_dirs(script, None)
    _deepspeed_config(build, {}, dirs)
    build.candidates.add("world_size", Setting(Unknown("the script was named without its launcher"),
                                               SourceKind.DERIVED))
    if facts.uses_hf_trainer:
        _framework_defaults(build.candidates)
    return _finish(build, shown, run_id=shown)


_ADAPTER_METHODS = {"lora", "qlora", "dora", "adalora", "loha", "lokr", "oft"}


def _derive_lora(candidates: _Candidates) -> None:
    """LLaMA-Factory's `finetuning_type: lora`, axolotl's `adapter: qlora`, a script's
    `--language-training-method lora`: the same fact as a `lora` switch, where it is written."""
    for source_knob in ("finetuning_type", "adapter"):
        source = candidates.winner(source_knob)
        if source is None or not isinstance(source.value, str):
            continue
        method = source.value.strip().lower()
        candidates.add("lora", replace(source, value=method in _ADAPTER_METHODS, via=(source,),
                                       note=f"{source_knob} {source.value}"))
        if method == "qlora" and candidates.winner("bits") is None:
            candidates.add("bits", replace(source, value=4, via=(source,), note=f"{source_knob} {source.value}"))
    for switch, bits in (("load_in_4bit", 4), ("load_in_8bit", 8)):
        source = candidates.winner(switch)
        if source is not None and source.value is True and candidates.winner("bits") is None:
            candidates.add("bits", replace(source, value=bits, via=(source,), note=switch))


def _derive_precision(candidates: _Candidates) -> None:
    """accelerate's `mixed_precision: bf16` reaches the HF trainer through the environment when the
    trainer's own bf16/fp16 flags are left at their defaults. LLaMA-Factory's `pure_bf16` casts the
    whole model to bf16: half precision with no fp32 copy."""
    chosen = candidates.winner("mixed_precision")
    if chosen is not None and chosen.value in ("bf16", "fp16"):
        candidates.add(chosen.value, Setting(True, SourceKind.DERIVED, None, via=(chosen,),
                                             note=f"mixed_precision {chosen.value}"))
    pure = candidates.winner("pure_bf16")
    if pure is not None and pure.value is True:
        # Derived (no origin of its own): a fix of bf16 must not rewrite the `pure_bf16` key.
        candidates.add("bf16", Setting(True, SourceKind.DERIVED, None, via=(pure,), note="pure_bf16"))
        if candidates.winner("torch_dtype") is None:
            candidates.add("torch_dtype", Setting("bfloat16", SourceKind.DERIVED, None, via=(pure,), note="pure_bf16"))


# `flash_attn`/`flash_attention` as written -> the attn_implementation it selects.
_FLASH_WORDS = {"true": "flash_attention_2", "1": "flash_attention_2", "yes": "flash_attention_2",
                "fa2": "flash_attention_2", "fa3": "flash_attention_3", "flash_attention_2": "flash_attention_2",
                "flash_attention_3": "flash_attention_3", "sdpa": "sdpa", "disabled": "eager", "eager": "eager"}


def _derive_attention(candidates: _Candidates) -> None:
    """A flash-attention switch or LLaMA-Factory's `flash_attn: fa2` picks the attention kernel,
    unless attn_implementation is written itself."""
    if candidates.winner("attn_implementation") is not None:
        return
    chosen = candidates.winner("flash_attention")
    if chosen is None or not isinstance(chosen.value, str):
        return
    implementation = _FLASH_WORDS.get(chosen.value.strip().lower())
    if implementation is not None:
        candidates.add("attn_implementation", Setting(implementation, SourceKind.DERIVED, None, via=(chosen,),
                                                      note=f"flash_attn {chosen.value}"))


def _unset_by_default(setting: Optional[Setting]) -> bool:
    return setting is not None and setting.kind in (SourceKind.DATACLASS_DEFAULT, SourceKind.ARGPARSE_DEFAULT) \
        and setting.value in (None, "", 0, 0.0, "None", "none")


def _finish(build: _Build, shown_script: str, run_id: Optional[str] = None) -> TrainingRun:
    _derive_lora(build.candidates)
    _derive_precision(build.candidates)
    _derive_attention(build.candidates)
    launcher_args = build.launch.launcher_args if build.launch.launcher == "accelerate" else ()
    derive_fsdp(build.candidates.winner, build.candidates.add, launcher_args)
    settings, pins = build.candidates.resolve()
    facts = build.facts
    eval_dataset, eval_where = (None, None)
    if facts is not None:
        eval_dataset, eval_where = eval_dataset_fact(facts)
    eval_data = settings.get("eval_data")
    if eval_data is not None and eval_data.kind != SourceKind.FRAMEWORK_DEFAULT and eval_data.value not in (
            None, "", 0, 0.0, "None", "none"):
        eval_dataset = True if eval_dataset is not False or not facts else eval_dataset
        eval_where = eval_data
    elif eval_dataset is None and _unset_by_default(eval_data):
        # The script's own eval-data argument is left at its empty default: whatever the trainer is
        # handed through `**data_module`, it is built from nothing.
        eval_dataset, eval_where = False, eval_data
    compute_metrics = None
    if facts is not None and facts.trainer_calls:
        compute_metrics = any(c.compute_metrics is not None and c.compute_metrics.value is not None
                              for c in facts.trainer_calls)
    diagnostics = list(build.candidates.diagnostics)
    if facts is not None:
        diagnostics.extend(facts.diagnostics)
    run_facts = RunFacts(
        entry_exists=build.entry_exists,
        eval_dataset=eval_dataset,
        eval_dataset_origin=eval_where.origin if eval_where is not None else None,
        compute_metrics=compute_metrics,
        reduces_logits=bool(facts is not None and any(
            c.preprocess_logits is not None and c.preprocess_logits.value is not None for c in facts.trainer_calls)),
        accepted_flags=facts.accepted_flags() if facts else None,
        own_flags=facts.own_flags() if facts else frozenset(),
        parse_known_args=facts.parse_known_args if facts else False,
        python_files=tuple(m.path for m in facts.modules) if facts else (),
        flags=build.flags,
        batch_multiplier=build.batch_multiplier,
        transformers_pin=transformers_pin(build.workspace, build.script_path,
                                          build.facts.path if build.facts else None),
    )
    origin = build.launch.origin
    files = tuple(dict.fromkeys(build.files))
    return TrainingRun(
        id=run_id or f"{shown_script}:{origin.line}",
        path=shown_script,
        launcher=build.launch.launcher,
        origin=origin,
        entry=build.entry_shown,
        settings=settings,
        pins=pins,
        files=files,
        configs=tuple(dict.fromkeys(build.configs)),
        diagnostics=tuple(diagnostics),
        facts=run_facts,
    )
