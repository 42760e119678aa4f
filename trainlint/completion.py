"""`trainlint completion bash|zsh|fish`: a static completion script, generated from the parser so
that it always knows the commands and options of this version."""
from __future__ import annotations

import argparse
from typing import Dict, List, Tuple

# (command, its options, the choices of each option that takes a fixed set of values)
Commands = List[Tuple[str, List[str], Dict[str, List[str]]]]


def _commands(parser: argparse.ArgumentParser) -> Commands:
    found: Commands = []
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        for name, sub in action.choices.items():
            options: List[str] = []
            choices: Dict[str, List[str]] = {}
            for option in sub._actions:
                options.extend(option.option_strings)
                if option.option_strings and option.choices:
                    for spelling in option.option_strings:
                        choices[spelling] = [str(choice) for choice in option.choices]
            found.append((name, sorted(options), choices))
    return found


def _bash(commands: Commands) -> str:
    cases = []
    for name, options, choices in commands:
        values = "".join(f"            {option}) COMPREPLY=($(compgen -W \"{' '.join(words)}\" -- \"$cur\")); "
                         f"return;;\n" for option, words in sorted(choices.items()))
        cases.append(f"        {name})\n          case \"$prev\" in\n{values}          esac\n"
                     f"          opts=\"{' '.join(options)}\";;\n")
    names = " ".join(name for name, _, _ in commands)
    return ("# trainlint bash completion: eval \"$(trainlint completion bash)\"\n"
            "_trainlint() {\n"
            "    local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\" opts\n"
            "    if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
            f"        COMPREPLY=($(compgen -W \"{names} --help --version\" -- \"$cur\")); return\n"
            "    fi\n"
            "    case \"${COMP_WORDS[1]}\" in\n"
            + "".join(cases) +
            "        *) opts=\"\";;\n"
            "    esac\n"
            "    if [[ \"$cur\" == -* ]]; then\n"
            "        COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
            "    else\n"
            "        COMPREPLY=($(compgen -f -- \"$cur\"))\n"
            "    fi\n"
            "}\n"
            "complete -o filenames -F _trainlint trainlint\n")


def _zsh(commands: Commands) -> str:
    lines = ["#compdef trainlint", "# trainlint zsh completion: trainlint completion zsh > \"${fpath[1]}/_trainlint\"",
             "_trainlint() {", "  local -a commands", "  commands=(" + " ".join(n for n, _, _ in commands) + ")",
             "  if (( CURRENT == 2 )); then", "    _describe 'command' commands", "    return", "  fi",
             "  case ${words[2]} in"]
    for name, options, choices in commands:
        specs = []
        for option in options:
            words = choices.get(option)
            specs.append(f"'{option}[]:value:({' '.join(words)})'" if words else f"'{option}[]'")
        lines.append(f"    {name}) _arguments {' '.join(specs)} '*:file:_files' ;;")
    lines += ["  esac", "}", "_trainlint \"$@\""]
    return "\n".join(lines) + "\n"


def _fish(commands: Commands) -> str:
    names = " ".join(name for name, _, _ in commands)
    lines = ["# trainlint fish completion: trainlint completion fish > ~/.config/fish/completions/trainlint.fish",
             f"complete -c trainlint -n '__fish_use_subcommand' -f -a '{names}'"]
    for name, options, choices in commands:
        for option in options:
            if not option.startswith("--"):
                continue
            words = choices.get(option)
            argument = f" -x -a '{' '.join(words)}'" if words else ""
            lines.append(f"complete -c trainlint -n '__fish_seen_subcommand_from {name}' -l {option[2:]}{argument}")
    return "\n".join(lines) + "\n"


def completion_script(parser: argparse.ArgumentParser, shell: str) -> str:
    """The completion script for `shell` (bash, zsh or fish)."""
    writers = {"bash": _bash, "zsh": _zsh, "fish": _fish}
    if shell not in writers:
        raise ValueError(f"no completion for {shell!r}; expected one of {', '.join(writers)}")
    return writers[shell](_commands(parser))
