"""accelerate: the config file `accelerate launch --config_file` reads, the mixed precision it hands
the trainer, and FSDP, which HF's `--fsdp`, accelerate's plugin and axolotl's `fsdp_config` all
configure through it."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Collection, Dict, FrozenSet, Mapping, Optional, Sequence

from trainlint.core import Launcher, Setting, SourceKind, Unknown, parsed_release
from trainlint.knobs import ACCELERATE as ACCELERATE_SPELLING
from trainlint.knobs import K, coerce, knob_for
from trainlint.resolution.flags import option_value
from trainlint.resolution.frameworks import deepspeed
from trainlint.resolution.frameworks.base import Derivation, DeriveContext, Framework, Stage
from trainlint.resolution.inputs import JobInputs
from trainlint.resolution.precedence import Candidates
from trainlint.resolution.sharding import derive_fsdp
from trainlint.resolution.workspace import Workspace


def read_launch_config(inputs: JobInputs, workspace: Workspace, launcher_args: Sequence[Setting],
                       dirs: Sequence[Path], cwd_unknown: bool = False) -> None:
    """The `--config_file` of `accelerate launch`, and the DeepSpeed config it or the command line names in turn
    (`cwd_unknown`: the launch runs from a directory not known statically, relative to which that config is named)."""
    given = _given_options(launcher_args)
    ds_file = option_value(launcher_args, "deepspeed_config_file")  # given on the command line, it wins
    config_setting = option_value(launcher_args, "config_file")
    disputed: Dict[str, Setting] = {}
    if config_setting is None and "mixed_precision" not in given:
        # accelerate then takes the precision from the default config of the machine it runs on (as it takes the
        # backend), and the trainer honours it through ACCELERATE_MIXED_PRECISION.
        inputs.candidates.add(K.MIXED_PRECISION, Setting(Unknown(MACHINE_PRECISION_REASON), SourceKind.DERIVED, None))
    if config_setting is not None and isinstance(config_setting.value, str):
        path = workspace.find(config_setting.value, dirs)
        config = workspace.config(path) if path is not None else None
        if config is None or (config.diagnostics and not config.values):
            # The config that chooses accelerate's backend (FSDP, DeepSpeed or plain data parallel) is not there to
            # read (elsewhere on the author's machine, outside the tree, or unreadable): the sharding is unknown, and
            # so is the precision unless the command line gives it.
            unread = f"the accelerate config `{config_setting.value}` is not read"
            inputs.candidates.add(K.ZERO_STAGE, Setting(
                Unknown(f"{unread}; it may shard the model (FSDP or DeepSpeed)"), SourceKind.DERIVED, None,
                via=(config_setting,)))
            if "mixed_precision" not in given:
                inputs.candidates.add(K.MIXED_PRECISION, Setting(Unknown(f"{unread}; it may set the mixed precision"),
                                                                 SourceKind.DERIVED, None, via=(config_setting,)))
            _command_line_values(inputs.candidates, launcher_args, given)
            return
        sectioned = _in_sections(config.values, launcher_args, given)
        sections_win = _sections_win(workspace, [path.parent, *dirs[:1]]) if sectioned else False
        # accelerate fills from the config file the options the command line leaves out, and in some releases the
        # keys of its DeepSpeed and FSDP sections over those it gives too.
        inputs.read_config(config, ACCELERATE_SPELLING, overridden=given - set(sectioned) if sections_win else given)
        if sections_win is not False:
            given = given - set(sectioned)
            ds_file = sectioned.get("deepspeed_config_file", ds_file) if sections_win else ds_file
        disputed = sectioned if sections_win is None else {}
        ds_file = ds_file or config.values.get("deepspeed_config.deepspeed_config_file")
    _command_line_values(inputs.candidates, launcher_args, given)
    for name, in_config in sorted(disputed.items()):
        if _unknown_by_version(inputs.candidates, launcher_args, name, in_config):
            ds_file = None if name == "deepspeed_config_file" else ds_file
    if ds_file is not None and isinstance(ds_file.value, str):
        deepspeed.apply_config(workspace.find(ds_file.value, dirs), ds_file.value, ds_file, workspace, inputs,
                               deepspeed.ConfigView(cwd_unknown=cwd_unknown))


MACHINE_PRECISION_REASON = ("`accelerate launch` without --config_file or --mixed_precision takes the mixed precision "
                            "from the default config of the machine it runs on")


def _given_options(launcher_args: Sequence[Setting]) -> FrozenSet[str]:
    """The options `accelerate launch` is given (`--num_processes=1`, `--num-processes 1`), as config keys."""
    return frozenset(word.value[2:].split("=", 1)[0].replace("-", "_") for word in launcher_args
                     if isinstance(word.value, str) and word.value.startswith("--") and len(word.value) > 2)


# Where a config key sits below the options of the same name: `--zero_stage` is `deepspeed_config.zero_stage`.
_CONFIG_SECTIONS = ("", "deepspeed_config.", "fsdp_config.")
# accelerate 0.16 to 1.4 copy every key of a config file's DeepSpeed and FSDP sections over the command line's option
# of the same name (commands/launch.py sets them unconditionally since huggingface/accelerate#928); before, and since
# huggingface/accelerate#3409 (1.5), an option the command line gives wins.
_SECTIONS_OVERRIDE = ("0.16", "1.5")


def _in_sections(values: Mapping[str, Setting], launcher_args: Sequence[Setting],
                 given: FrozenSet[str]) -> Dict[str, Setting]:
    """The options the command line gives that the config file also sets in its DeepSpeed or FSDP section, with a
    different value, by option name (their values in the config)."""
    out: Dict[str, Setting] = {}
    for name in sorted(given):
        found = next((values[key] for key in (f"deepspeed_config.{name}", f"fsdp_config.{name}",
                                              f"fsdp_config.{name[len('fsdp_'):]}" if name.startswith("fsdp_") else "")
                      if key in values), None)
        written = option_value(launcher_args, name)
        if found is not None and written is not None and str(written.value).lower() != str(found.value).lower():
            out[name] = found
    return out


def _sections_win(workspace: Workspace, starts: Sequence[Path]) -> Optional[bool]:
    """Whether the accelerate the repository pins takes its config sections over the command line; None when no
    requirements file pins a release, from the config file's folder (or the launch's) up to the repository's root."""
    pin = next((found for found in (workspace.pin_above(start, "accelerate") for start in starts) if found), None)
    release = parsed_release(pin.value) if pin is not None else None
    if release is None:
        return None
    return parsed_release(_SECTIONS_OVERRIDE[0]) <= release < parsed_release(_SECTIONS_OVERRIDE[1])


def _unknown_by_version(candidates: Candidates, launcher_args: Sequence[Setting], name: str,
                        in_config: Setting) -> bool:
    """The knob an option and the config section disagree on, unknown: which one accelerate takes depends on its
    release, and the repository pins none. Whether the option names a knob (the DeepSpeed config file counts)."""
    written = option_value(launcher_args, name)
    knob = K.ZERO_STAGE if name == "deepspeed_config_file" else next(
        (found for found in (knob_for(section + name, ACCELERATE_SPELLING) for section in _CONFIG_SECTIONS[1:])
         if found is not None), None)
    if written is None or knob is None:
        return False
    reason = (f"`--{name} {written.value}` and `{name}: {in_config.value}` in the accelerate config disagree, and "
              f"accelerate {_SECTIONS_OVERRIDE[0]} to 1.4 take the config's, other releases the command line's; the "
              "repository pins no accelerate release")
    candidates.add(knob, Setting(Unknown(reason), SourceKind.LAUNCHER_FLAG, written.origin, via=(written, in_config)))
    return True


def _command_line_values(candidates: Candidates, launcher_args: Sequence[Setting], given: FrozenSet[str]) -> None:
    """The values of the options the command line gives, in place of a config file's or of accelerate's defaults
    (`--mixed_precision bf16`, `--zero_stage 3`). The process count is world.py's, which reads it with the machine
    count."""
    for name in sorted(given):
        knob = next((found for found in (knob_for(section + name, ACCELERATE_SPELLING) for section in _CONFIG_SECTIONS)
                     if found is not None), None)
        value = option_value(launcher_args, name) if knob not in (None, K.WORLD_SIZE) else None
        if value is not None:
            candidates.add(knob, replace(value, kind=SourceKind.LAUNCHER_FLAG))


# `accelerate launch` options that choose the backend themselves: the default config's choice is then not taken.
_BACKEND_FLAGS = frozenset({"--multi_gpu", "--use_deepspeed", "--use_fsdp", "--use_megatron_lm", "--cpu", "--tpu",
                            "--mps"})


def default_backend_reason(launcher_args: Sequence[Setting], script_flags: Collection[str]) -> Optional[str]:
    """Why the sharding of `accelerate launch` with no `--config_file` and no backend option is unknown: accelerate
    then takes the backend (DeepSpeed, FSDP or plain data parallel) from the default config of the machine it runs
    on, as it takes the process count. A script given HF's `--fsdp` (`script_flags`: its flag names) shards as that
    says."""
    if option_value(launcher_args, "config_file") is not None:
        return None
    written = {word.value.split("=", 1)[0] for word in launcher_args if isinstance(word.value, str)}
    if written & _BACKEND_FLAGS or K.FSDP in script_flags:  # HF's `--fsdp` flag bears the knob's name
        return None
    return ("`accelerate launch` without --config_file takes its backend from the default config of the machine it "
            "runs on, which may shard the model (DeepSpeed or FSDP)")


def _derive_precision(candidates: Candidates, context: DeriveContext) -> None:
    """`mixed_precision: bf16` reaches the HF trainer through the environment when the trainer's own
    bf16/fp16 flags are left at their defaults."""
    chosen = candidates.winner(K.MIXED_PRECISION)
    if chosen is None or not (isinstance(chosen.value, Unknown) or chosen.value in ("bf16", "fp16")):
        return
    # A trainer that turns bf16 or fp16 on itself writes its own choice into that environment (TrainingArguments
    # sets ACCELERATE_MIXED_PRECISION from its flags): the config's choice then does not reach it. The choice may be
    # its class's default (TRL's configs turn bf16 on from trl 0.19).
    for knob in (K.BF16, K.FP16):
        own = candidates.winner(knob)
        if own is not None and coerce(knob, own.value).value is True:
            return
    if isinstance(chosen.value, Unknown):
        # Whether the step runs in 16 bits is the machine's choice: bf16 is as unknown as the config that sets it.
        candidates.add(K.BF16, Setting(chosen.value, SourceKind.DERIVED, None, via=(chosen,)))
        return
    candidates.add(chosen.value, Setting(True, SourceKind.DERIVED, None, via=(chosen,),
                                         note=f"mixed_precision {chosen.value}"))


def _derive_sharding(candidates: Candidates, context: DeriveContext) -> None:
    launcher_args = context.launcher_args if context.launcher == Launcher.ACCELERATE else ()
    derive_fsdp(candidates.winner, candidates.add, launcher_args)


ACCELERATE = Framework(
    name="accelerate",
    namespace=ACCELERATE_SPELLING,
    derivations=(Derivation(Stage.PRECISION, _derive_precision), Derivation(Stage.SHARDING, _derive_sharding)),
    launcher=Launcher.ACCELERATE,
)
