"""`trainlint check | fix | show | estimate | rule | gpus | config`: the arguments, parsed here, go to
trainlint.commands, which asks trainlint.api and writes the answer."""
from __future__ import annotations

import argparse
import gc
import os
import re
import sys
from pathlib import Path
from typing import List, NoReturn, Optional, Sequence

from trainlint import __version__

# trainlint.api.ExitCode.ERROR: the API is imported only once a command runs (a fast --help).
EXIT_ERROR = 2
FAIL_ON_CHOICES = ("error", "warning", "info", "never")
EPILOG = ("exit codes: 0 nothing at or above the failing severity, 1 findings, 2 usage, configuration or "
          "internal error. `trainlint rule --all` documents every rule.")


COLOR_CHOICES = ("auto", "always", "never")


class Parser(argparse.ArgumentParser):
    """argparse with a "did you mean" for a mistyped option or command (as git and cargo offer)."""

    def error(self, message: str) -> "NoReturn":  # type: ignore[override]
        owners = self._commands_owning(message)
        if owners:
            super().error(message + f"\n  it is an option of {', '.join(f'`trainlint {name}`' for name in owners)}")
        suggestion = self._suggestion(message)
        super().error(message + (f"\n  did you mean `{suggestion}`?" if suggestion else ""))

    def _commands_owning(self, message: str) -> List[str]:
        """The subcommands that take an option spelled exactly as the unrecognised one: it was given to
        another command, and suggesting the same spelling back would not help."""
        unknown = re.search(r"unrecognized arguments: (-\S+)", message)
        if not unknown:
            return []
        option = unknown.group(1).split("=")[0]
        return [name for action in self._actions if isinstance(action, argparse._SubParsersAction)
                for name, sub in action.choices.items()
                if any(option in other.option_strings for other in sub._actions)]

    def _suggestion(self, message: str) -> Optional[str]:
        unknown = re.search(r"unrecognized arguments: (-\S+)", message)
        if unknown:
            options = [option for action in self._all_actions() for option in action.option_strings]
            return _closest(unknown.group(1).split("=")[0], options)
        choice = re.search(r"invalid choice: '([^']*)'", message)
        if choice:
            commands = [name for action in self._actions if isinstance(action, argparse._SubParsersAction)
                        for name in action.choices]
            return _closest(choice.group(1), commands)
        return None

    def _all_actions(self) -> List[argparse.Action]:
        """This parser's options and, for the top-level parser, every subcommand's."""
        actions = list(self._actions)
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    actions.extend(sub._actions)
        return actions


def _closest(word: str, candidates: Sequence[str]) -> Optional[str]:
    import difflib  # only to answer a mistyped option or command

    found = difflib.get_close_matches(word, sorted(set(candidates)), n=1, cutoff=0.6)
    return found[0] if found else None


def _codes(text: str) -> List[str]:
    return [part.strip().upper() for part in text.split(",") if part.strip()]


def _scan_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", type=Path, help="launchers, entry scripts, configs or folders (default: .)")
    parser.add_argument("--exclude", action="append", default=[], metavar="PATTERN", help="path patterns to skip")
    parser.add_argument("--config", type=Path, metavar="FILE", help="settings file (default: the nearest "
                        "trainlint.toml or pyproject.toml with [tool.trainlint])")
    parser.add_argument("--isolated", action="store_true", help="ignore every configuration file")
    parser.add_argument("--allow-outside-reads", action="store_true", help="also read configs and scripts a "
                        "launcher names outside the scanned tree (off by default: a pull request could name any file)")
    parser.add_argument("--no-respect-gitignore", dest="respect_gitignore", action="store_false",
                        help="also scan files that .gitignore ignores")


def _gpu_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--gpu", metavar="NAME", help="target GPU, e.g. a100-40gb, h100, v100-32gb (`trainlint gpus` "
                        "lists them); without it an A100 80GB is assumed")
    parser.add_argument("--gpu-memory", metavar="SIZE", help="usable memory of a GPU that is not listed, e.g. 48GiB")
    parser.add_argument("--num-gpus", type=int, metavar="N", help="the GPUs you will run on: the world size when "
                        "the launcher does not say, and the count TL112 compares a launcher's with")


def _global_batch_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--global-batch", type=int, metavar="B", help="global batch to keep when porting a job whose "
                        "launcher does not state its GPU count (default: keep per-device × accumulation)")


def _rule_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--select", type=_codes, default=[], metavar="CODES",
                        help="only these codes or prefixes, comma-separated (TL1,TL201; ALL for every rule); "
                        "replaces the configured selection")
    parser.add_argument("--extend-select", type=_codes, default=[], metavar="CODES",
                        help="add these codes or prefixes to the selection")
    parser.add_argument("--ignore", type=_codes, default=[], metavar="CODES",
                        help="skip these codes or prefixes (in addition to the configured ones)")
    parser.add_argument("--extend-ignore", type=_codes, default=[], metavar="CODES", help="same as --ignore")


def _all_target_options(parser: argparse.ArgumentParser) -> None:
    _scan_options(parser)
    _gpu_options(parser)
    _rule_options(parser)


def _color_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--color", choices=COLOR_CHOICES, default="auto",
                        help="colour the terminal output (default: auto: on a terminal, unless NO_COLOR is set or "
                        "TERM=dumb; FORCE_COLOR forces it)")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="trainlint", description="Find the settings that will run a fine-tuning "
                    "job out of GPU memory, before launch.", epilog=EPILOG)
    parser.add_argument("--version", action="version", version=f"trainlint {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)

    check = commands.add_parser("check", help="report risky settings", epilog=EPILOG)
    _all_target_options(check)
    check.add_argument("--output-format", default="full", choices=["full", "concise", "json", "github", "sarif"],
                       help="how findings are written (default: full)")
    check.add_argument("-o", "--output-file", type=Path, metavar="FILE",
                       help="write the report here instead of stdout")
    check.add_argument("-e", "--exit-zero", action="store_true", help="exit 0 even when there are findings")
    check.add_argument("--show-info", action="store_true", help="list info findings one by one (the terminal "
                       "formats fold them into one line of what is unknown; JSON and SARIF always carry them)")
    check.add_argument("--statistics", action="store_true", help="print how many findings each rule has, not the "
                       "findings")
    check.add_argument("-q", "--quiet", action="store_true", help="print the findings only, without the notes and "
                       "the summary line")
    _color_option(check)
    check.add_argument("--no-cache", action="store_true", help="read every file again (no .trainlint_cache)")
    check.add_argument("--cache-dir", metavar="DIR", help="where to keep what was read and the results "
                       "(default: .trainlint_cache)")
    check.add_argument("--preserve-effective-batch", action="store_true",
                       help="propose batch fixes that keep per-device × accumulation × world size")
    check.add_argument("--fail-on", choices=FAIL_ON_CHOICES,
                       help="lowest severity that makes the exit code 1 (default: warning)")
    check.add_argument("--summary-file", type=Path, metavar="FILE", help="also write a Markdown summary (with the "
                       "github format it is appended to $GITHUB_STEP_SUMMARY when that is set)")
    check.add_argument("--diff-base", metavar="REF", help="report every job that reads a file changed since the "
                       "merge base with REF (e.g. origin/main)")
    check.add_argument("--changed", action="store_true", help="PATHS are changed files (as pre-commit passes "
                       "them): scan their repository and report every job that reads one")
    check.add_argument("--baseline", type=Path, metavar="FILE", help="report only findings not in this baseline")
    check.add_argument("--write-baseline", type=Path, metavar="FILE", help="write the current findings as a "
                       "baseline and exit 0")

    fix = commands.add_parser("fix", help="rewrite risky settings", epilog=EPILOG)
    _all_target_options(fix)
    fix.add_argument("--preserve-effective-batch", action="store_true",
                     help="keep per-device × accumulation × world size when lowering the micro-batch")
    fix.add_argument("--unsafe-fixes", action="store_true", help="also apply fixes that may change results")
    _global_batch_option(fix)
    fix.add_argument("--diff", action="store_true", help="print a unified diff and write nothing")
    fix.add_argument("--changed", action="store_true",
                     help="PATHS are changed files (as pre-commit passes them): fix every job that reads one")

    show = commands.add_parser("show", help="the resolved jobs: every setting, its value and its origin")
    _scan_options(show)
    _gpu_options(show)
    show.add_argument("--output-format", default="full", choices=["full", "json"], help="default: full")
    _color_option(show)

    estimate = commands.add_parser("estimate", help="per-GPU memory estimate of each job")
    _scan_options(estimate)
    _gpu_options(estimate)
    estimate.add_argument("--output-format", default="full", choices=["full", "json"], help="default: full")
    _global_batch_option(estimate)
    _color_option(estimate)

    rule = commands.add_parser("rule", help="print a rule's documentation")
    rule.add_argument("code", nargs="?", help="a rule code, e.g. TL101")
    rule.add_argument("--all", action="store_true", help="every rule, in code order")

    commands.add_parser("gpus", help="list the GPUs trainlint knows, with their usable memory")

    config = commands.add_parser("config", help="the effective settings and where each comes from")
    _all_target_options(config)
    config.add_argument("--fail-on", choices=FAIL_ON_CHOICES)

    completion = commands.add_parser("completion", help="print a shell completion script")
    completion.add_argument("shell", choices=("bash", "zsh", "fish"), help="the shell to complete in")
    return parser


def parse_command_line(parser: argparse.ArgumentParser, argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    """The command line, its paths and options in any order (`trainlint check . --gpu a100-80gb train.sh`), as
    ruff and git take them: argparse's own parse stops taking paths at the first option. Anything the command does
    not take is left to the whole parser, whose error names the command that takes it."""
    words = list(sys.argv[1:] if argv is None else argv)
    commands = next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction))
    command = commands.choices.get(words[0]) if words else None
    if command is None:
        return parser.parse_args(words)
    args, extras = command.parse_known_intermixed_args(words[1:])
    if extras:
        return parser.parse_args(words)
    args.command = words[0]
    return args


# A scan builds many small objects that live until it ends (settings, origins, the readers' facts), and the collector
# walks them again at every collection of the youngest generation (700 allocations by default). The command owns its
# process and collects less often, as mypy's does; a program calling trainlint.api keeps its own policy.
COLLECTION_THRESHOLDS = (200_000, 30, 30)


def main(argv: Optional[Sequence[str]] = None) -> int:
    gc.set_threshold(*COLLECTION_THRESHOLDS)
    parser = build_parser()
    args = parse_command_line(parser, argv)
    if args.command is None:
        parser.print_help()
        return EXIT_ERROR
    try:
        from trainlint import commands

        return int(getattr(commands, f"run_{args.command}")(args))
    except KeyboardInterrupt:
        return EXIT_ERROR
    except Exception as error:  # the last line of defence: never a traceback for a user's input
        from trainlint.api import UsageError

        if isinstance(error, UsageError):
            print(f"trainlint: error: {error}", file=sys.stderr)
            return EXIT_ERROR
        print(f"trainlint: internal error: {type(error).__name__}: {error}", file=sys.stderr)
        if "TRAINLINT_DEBUG" in os.environ:
            raise
        return EXIT_ERROR


if __name__ == "__main__":
    raise SystemExit(main())
