"""axolotl's own command lines, read as axolotl reads them.

`axolotl train CONFIG [options] [-- launcher args]` is a click command: a config key is overridden by an
option spelt with dashes (`--micro-batch-size 64`, a boolean key also `--sample-packing` /
`--no-sample-packing`); `--launcher` picks what starts the processes (accelerate unless told, or torchrun,
or python in this process); `--num-processes` and `--main-process-port` reach accelerate, and so does
every word click does not know (an underscore spelling, a stray word) and everything after `--`.

`<launcher> -m axolotl.cli.train CONFIG [--key value ...]` is a python-fire command: the options are config
keys, with dashes and underscores alike, and the launcher's own options are the launch's.

Either way the values on the command line replace the recipe's (unless the recipe says `strict: true`
and does not write the key: then they are dropped).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import List, Mapping, Optional, Sequence, Tuple

from trainlint.core import Launcher, Setting, SourceKind, SwitchPair, Unknown
from trainlint.readers.facts import Launch
from trainlint.resolution.flags import as_flag, parse_flags

TRAIN_MODULE = "axolotl.cli.train"

_LAUNCHERS: Mapping[str, Launcher] = {"accelerate": Launcher.ACCELERATE, "torchrun": Launcher.TORCHRUN,
                                      "python": Launcher.PYTHON}
# Options axolotl hands to `accelerate launch` rather than to the config.
_ACCELERATE_OPTIONS = ("num-processes", "main-process-port")
# The keys that size a job, unknown when a sweep file that may vary them is not read.
_SIZING_KEYS = ("base_model", "micro_batch_size", "gradient_accumulation_steps", "sequence_len", "adapter",
                "load_in_4bit", "load_in_8bit", "deepspeed", "fsdp", "fsdp_config", "gradient_checkpointing")


@dataclass(frozen=True)
class AxolotlCommand:
    """What an axolotl command line runs: its recipe, the launcher that starts the processes, the
    arguments that launcher gets, and the config keys the command line sets."""

    config: Optional[Setting]
    launcher: Optional[Launcher]  # None: `--launcher` is not known statically
    launcher_setting: Optional[Setting]
    launcher_args: Tuple[Setting, ...]
    overrides: Tuple[Tuple[str, Setting], ...]  # (config key, value at its flag), in command-line order
    cloud: Optional[Setting] = None  # `--cloud F`: the training runs on machines a cloud config names
    sweep: Optional[Setting] = None  # `--sweep F`: one run per combination of the values F lists


def runs_axolotl_train(launch: Launch) -> bool:
    """`axolotl train ...`, or a launcher running `-m axolotl.cli.train`."""
    if launch.launcher == Launcher.AXOLOTL:
        return True
    return launch.entry_is_module and launch.entry is not None and launch.entry.value == TRAIN_MODULE


def read_command(launch: Launch) -> AxolotlCommand:
    if launch.launcher == Launcher.AXOLOTL:
        return _click_command(launch)
    return _fire_command(launch)


def _is_word(setting: Setting) -> bool:
    return isinstance(setting.value, str)


def _click_command(launch: Launch) -> AxolotlCommand:
    flags, positionals = parse_flags(launch.script_args, lambda name: name.startswith("no-"))
    launcher_setting: Optional[Setting] = None
    cloud = sweep = None
    passed_on: List[Setting] = []  # what click leaves in ctx.args: accelerate receives it
    overrides: List[Tuple[str, Setting]] = []
    for flag in flags:
        name = flag.name
        if name == "launcher":
            launcher_setting = flag.value
        elif name == "cloud":
            cloud = flag.value
        elif name == "sweep":
            sweep = flag.value
        elif name in _ACCELERATE_OPTIONS or "_" in name:
            # click options are spelt with dashes: `--micro_batch_size` is no option of axolotl's, and goes
            # on to the launcher like `--num-processes`.
            passed_on.append(flag.flag)
            if flag.value is not flag.flag and not flag.bare:
                passed_on.append(flag.value)
        elif name.startswith("no-"):
            key = name[3:].replace("-", "_")
            overrides.append((key, replace(flag.value, value=False, kind=SourceKind.LAUNCHER_FLAG,
                                           note=f"--{name}", written_as=f"--{name}",
                                           switch=SwitchPair(f"--{name[3:]}", f"--{name}"))))
        elif flag.bare and flag.value.value is True:
            key = name.replace("-", "_")
            overrides.append((key, replace(flag.value, note=f"--{name}", written_as=f"--{name}",
                                           switch=SwitchPair(f"--{name}", f"--no-{name}"))))
        else:
            overrides.append((name.replace("-", "_"), as_flag(flag.value, f"--{name}")))
    passed_on.extend(positionals)
    launcher: Optional[Launcher] = Launcher.ACCELERATE
    if launcher_setting is not None:
        launcher = _LAUNCHERS.get(launcher_setting.value) if _is_word(launcher_setting) else None
    return AxolotlCommand(launch.entry, launcher, launcher_setting,
                          tuple(passed_on) + tuple(launch.launcher_args), tuple(overrides), cloud, sweep)


def _fire_command(launch: Launch) -> AxolotlCommand:
    flags, positionals = parse_flags(launch.script_args, lambda _name: False)
    config = positionals[0] if positionals else None
    overrides: List[Tuple[str, Setting]] = []
    for flag in flags:
        key = flag.name.replace("-", "_")
        if key == "config":
            config = flag.value
            continue
        overrides.append((key, as_flag(flag.value, f"--{flag.name}")))
    return AxolotlCommand(config, launch.launcher, None, tuple(launch.launcher_args), tuple(overrides))


def applied_overrides(command: AxolotlCommand, recipe_keys: Sequence[str],
                      strict: Optional[Setting]) -> List[Tuple[str, Setting]]:
    """The overrides axolotl applies: all of them, or under `strict: true` those the recipe writes."""
    if strict is None or strict.value is not True:
        return list(command.overrides)
    roots = {key.split(".", 1)[0] for key in recipe_keys}
    return [(key, value) for key, value in command.overrides if key.split(".", 1)[0] in roots]


def unknown_world(command: AxolotlCommand, use_ray: Optional[Setting]) -> Optional[Setting]:
    """The world size, when the command leaves it to something trainlint does not read."""
    def unknown(reason: str, source: Optional[Setting]) -> Setting:
        return Setting(Unknown(reason), SourceKind.DERIVED, None, note=reason,
                       via=(source,) if source is not None else ())

    if command.cloud is not None:
        return unknown("`axolotl train --cloud` trains on the machines its cloud config names", command.cloud)
    if use_ray is not None and use_ray.value is True:
        return unknown("with use_ray, Ray starts ray_num_workers workers", use_ray)
    if command.launcher is None:
        shown = command.launcher_setting.text if command.launcher_setting is not None else ""
        return unknown(f"`--launcher {shown}` cannot be resolved statically", command.launcher_setting)
    return None


def sweep_overrides(command: AxolotlCommand, swept_keys: Optional[Sequence[str]]) -> List[Tuple[str, Setting]]:
    """Every key a `--sweep` file varies is unknown: each run of the sweep takes another of its values.
    `swept_keys` None: the sweep file was not read, and any key may vary."""
    if command.sweep is None:
        return []
    reason = f"`--sweep {command.sweep.text or command.sweep.value}` varies it"
    if swept_keys is None:
        swept_keys = _SIZING_KEYS
    found = []
    for key in swept_keys:
        parts = [part for part in key.split(".") if part != "_" and not part.isdigit()]
        if parts:
            found.append((".".join(parts), Setting(Unknown(reason), SourceKind.DERIVED, None, note=reason,
                                                   via=(command.sweep,))))
    return found
