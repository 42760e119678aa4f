"""Launches: finding the launcher behind wrappers, and reading its command line into options, entry, arguments."""

from __future__ import annotations

import posixpath
from dataclasses import replace
from typing import Dict, List, Optional, Sequence

from trainlint.core import Setting, SourceKind
from trainlint.readers.facts import Launch
from trainlint.readers.shell.base import ReaderBase
from trainlint.readers.shell.options import (
    ISOLATING_WRAPPERS,
    LAUNCHER_NAMES,
    LAUNCHER_SYNTAX,
    PYTHON_MODULE_LAUNCHERS,
    PYTHON_VALUE_OPTIONS,
    SEARCHING_WRAPPERS,
    SHELLS,
    TRANSPARENT_WRAPPERS,
    Launcher,
)
from trainlint.readers.shell.values import Ctx, LaunchShape, Node, State, Word


def basename(word: Word) -> Optional[str]:
    value = word.known
    return posixpath.basename(value) if value else None


def is_python(name: Optional[str]) -> bool:
    if not name or not name.startswith("python"):
        return False
    rest = name[len("python") :]
    return all(char.isdigit() or char == "." for char in rest)


def normalise_option(option: str) -> str:
    stripped = option.lstrip("-")
    return option[: len(option) - len(stripped)] + stripped.replace("-", "_")


def is_launcher_word(word: Word) -> bool:
    name = basename(word)
    return bool(name) and (name in LAUNCHER_NAMES or name in SHELLS or is_python(name))


def env_wrapper_args(words: Sequence[Word], index: int, env: Dict[str, Setting]) -> int:
    while index < len(words):
        text = words[index].known or ""
        if text.startswith("-"):
            index += 2 if text in ("-u", "--unset", "-C", "--chdir", "-S") else 1
            continue
        name, equals, value = text.partition("=")
        if equals and name.replace("_", "a").isalnum():
            env[name] = replace(words[index].setting, value=value, kind=SourceKind.SHELL_VARIABLE)
            index += 1
            continue
        break
    return index


def is_passthrough_marker(word: Word) -> bool:
    return word.passthrough and not word.pieces


# ms-swift's commands that train (`swift sft|pt|rlhf`).
SWIFT_TRAINING_COMMANDS = frozenset({"sft", "pt", "rlhf"})


def launch_shape(words: Sequence[Word], index: int) -> Optional[LaunchShape]:
    name = basename(words[index])
    rest = list(words[index + 1 :])
    if name == "deepspeed":
        return split_launcher(Launcher.DEEPSPEED, rest)
    if name == "torchrun":
        return split_launcher(Launcher.TORCHRUN, rest)
    if name == "accelerate":
        if not rest or rest[0].known != "launch":
            return None
        return split_launcher(Launcher.ACCELERATE, rest[1:])
    if name == "llamafactory-cli":
        if len(rest) < 2 or rest[0].known != "train":
            return None
        if (rest[1].known or "").startswith("-"):
            # Every argument on the command line, parsed like HfArgumentParser flags.
            return LaunchShape(Launcher.LLAMAFACTORY_CLI, (), None, False, tuple(rest[1:]))
        return LaunchShape(Launcher.LLAMAFACTORY_CLI, (), rest[1], False, tuple(rest[2:]))
    if name == "axolotl":
        return axolotl_shape(rest)
    if name == "swift":
        # ms-swift's training commands; its other commands (infer, export, deploy) train nothing, and a `swift`
        # with any other word is another program (Apple's Swift toolchain).
        if not rest or rest[0].known not in SWIFT_TRAINING_COMMANDS:
            return None
        # The command word stays the first argument: it decides ms-swift's defaults.
        return LaunchShape(Launcher.SWIFT, (), None, False, tuple(rest))
    if is_python(name):
        return python_shape(rest)
    return None


# `axolotl train` options that take a value and are no config key (the config is the first other word).
_AXOLOTL_VALUE_OPTIONS = frozenset({"--launcher", "--cloud", "--sweep"})
_RECIPE_SUFFIXES = (".yml", ".yaml")


def axolotl_shape(rest: List[Word]) -> Optional[LaunchShape]:
    """`axolotl train CONFIG [options] [-- launcher args]`: the config is the entry; the options (config
    overrides and axolotl's own) are the script arguments; the words after `--` go to the launcher axolotl
    starts, so they are the launch's launcher arguments."""
    if not rest or rest[0].known != "train":
        return None
    words = list(rest[1:])
    end = next((i for i, w in enumerate(words) if w.known == "--" and not w.passthrough), len(words))
    options, launcher_args = words[:end], tuple(words[end + 1:])
    index = 0
    while index < len(options):
        text = options[index].known
        if text is None or not text.startswith("-") or text == "-":
            if text is None and options[index].prefix.startswith("-"):
                index += 1  # `--micro-batch-size=$MBS`: one word
                continue
            break
        following = options[index + 1].known if index + 1 < len(options) else None
        if "=" in text or text.startswith("--no-"):
            index += 1
        elif text in _AXOLOTL_VALUE_OPTIONS or not (following or "").endswith(_RECIPE_SUFFIXES):
            index += 2
        else:
            index += 1  # `--sample-packing config.yml`: a switch before the config
    if index >= len(options):
        return None
    entry = options[index]
    return LaunchShape(Launcher.AXOLOTL, launcher_args, entry, False, tuple(options[:index] + options[index + 1:]))


def python_shape(rest: List[Word]) -> Optional[LaunchShape]:
    index = 0
    while index < len(rest):
        text = rest[index].known
        if text is None or not text.startswith("-") or text == "-":
            break
        if text == "-c" or (
            text.startswith("-")
            and not text.startswith("--")
            and "c" in text[1:]
            and not text.startswith(PYTHON_VALUE_OPTIONS)
            and not text.startswith("-m")
        ):
            return None
        if text.startswith("-m"):
            module_word = rest[index + 1] if text == "-m" and index + 1 < len(rest) else None
            if text != "-m":
                module_word = replace(rest[index], setting=replace(rest[index].setting, value=text[2:]))
            if module_word is None:
                return None
            after = rest[index + 2 :] if text == "-m" else rest[index + 1 :]
            module = module_word.known
            if module in PYTHON_MODULE_LAUNCHERS:
                return split_launcher(PYTHON_MODULE_LAUNCHERS[module], after)
            return LaunchShape(Launcher.PYTHON, tuple(rest[:index]), module_word, True, tuple(after))
        if text in PYTHON_VALUE_OPTIONS:
            index += 2
            continue
        index += 1
    if index >= len(rest):
        return None
    return LaunchShape(Launcher.PYTHON, tuple(rest[:index]), rest[index], False, tuple(rest[index + 1 :]))


def split_launcher(launcher: Launcher, rest: Sequence[Word]) -> Optional[LaunchShape]:
    """Separate launcher options from the entry script and its arguments."""
    syntax = LAUNCHER_SYNTAX[launcher]
    is_module = False
    index = 0
    while index < len(rest):
        word = rest[index]
        if is_passthrough_marker(word):
            index += 1
            continue
        text = word.known
        if text is None and word.prefix.startswith("-"):
            index += 1  # `--node_rank=$RANK`: an option whose value is not known
            continue
        if text is None:
            following = rest[index + 1].known if index + 1 < len(rest) else None
            if following is not None and following.endswith(".py"):
                index += 1  # an unknown launcher option (like an unresolved $DISTRIBUTED_ARGS)
                continue
            break
        if text == "--":
            index += 1
            break
        if not text.startswith("-") or text == "-":
            break
        option, equals, _ = text.partition("=")
        normalised = normalise_option(option)
        if option in syntax.module_flags or normalised in syntax.module_flags:
            is_module = True
            index += 1
        elif equals or normalised in syntax.flags:
            index += 1
        elif normalised in syntax.value_options or normalised.startswith(syntax.value_prefixes):
            index += 2
        else:
            following = rest[index + 1].known if index + 1 < len(rest) else None
            takes_value = following is not None and not following.startswith("-") and not following.endswith(".py")
            index += 2 if takes_value or (index + 1 < len(rest) and following is None) else 1
    if index >= len(rest):
        return None
    return LaunchShape(launcher, tuple(rest[:index]), rest[index], is_module, tuple(rest[index + 1 :]))


class LaunchesMixin(ReaderBase):
    """Recognises a launch behind its wrappers and records it with its environment and directory."""

    def _maybe_launch(
        self, node: Node, words: List[Word], prefix_env: Dict[str, Setting], ctx: Ctx, state: State
    ) -> None:
        env = dict(prefix_env)
        wrapper = ctx.wrapper
        wrapper_args = ctx.wrapper_args
        index = 0
        launchish = False
        while index < len(words):
            name = basename(words[index])
            if name in TRANSPARENT_WRAPPERS:
                index += 1
                if name == "env":
                    index = env_wrapper_args(words, index, env)
                continue
            if name in SEARCHING_WRAPPERS:
                launchish = True
                found = next(
                    (position for position in range(index + 1, len(words)) if is_launcher_word(words[position])),
                    None,
                )
                if name in ISOLATING_WRAPPERS and wrapper is None:
                    wrapper = name
                    wrapper_args = tuple(
                        w.setting
                        for w in words[index + 1 : found if found is not None else len(words)]
                        if not is_passthrough_marker(w)
                    )
                if found is None:
                    break
                index = found
                continue
            break
        if index >= len(words):
            if launchish:
                self._check_continuation(node, ctx, basename(words[0]) or "")
            return
        name = basename(words[index])
        if name in SHELLS:
            self._check_continuation(node, ctx, name or "")
            if wrapper is None and ctx.shell_depth == 0:
                self._script_call(node, words, index, ctx, state)
            self._inner_shell(words, index, env, wrapper or name, replace(ctx, wrapper_args=wrapper_args), state)
            return
        shape = launch_shape(words, index)
        if launchish or name in LAUNCHER_NAMES or is_python(name):
            self._check_continuation(node, ctx, name or "")
        if shape is None:
            return
        self._record_launch(node, shape, words, env, wrapper, replace(ctx, wrapper_args=wrapper_args), state)

    def _record_launch(
        self,
        node: Node,
        shape: LaunchShape,
        words: Sequence[Word],
        env: Dict[str, Setting],
        wrapper: Optional[str],
        ctx: Ctx,
        state: State,
    ) -> None:
        full_env: Dict[str, Setting] = {}
        for name, binding in state.env.items():
            if binding.exported and binding.hidden is None and not binding.is_unset and binding.setting is not None:
                full_env[name] = binding.setting
        full_env.update(env)
        used = (shape.launcher_args, (shape.entry,) if shape.entry is not None else (), shape.script_args)
        for group in used:
            for word in group:
                for reason in word.unmodelled:
                    origin = word.setting.origin
                    if origin is not None:
                        self._unmodelled(
                            f"{reason}; this {shape.launcher.value} argument stays unknown",
                            (origin.start_byte, origin.end_byte),
                        )
        launch = Launch(
            launcher=shape.launcher,
            origin=self._origin(self._node_span(ctx.doc, node)),
            launcher_args=tuple(w.setting for w in shape.launcher_args if not is_passthrough_marker(w)),
            entry=shape.entry.setting if shape.entry is not None else None,
            entry_is_module=shape.entry_is_module,
            script_args=tuple(w.setting for w in shape.script_args if not is_passthrough_marker(w)),
            env=full_env,
            cwd=None if state.cwd_lost else state.cwd,
            cwd_unknown=state.cwd_lost,
            passthrough=any(word.passthrough for word in words),
            wrapper=wrapper,
            wrapper_args=ctx.wrapper_args if wrapper is not None else (),
            written=state.written,
            called_at=ctx.called_at,
        )
        self.launches.append(launch)
