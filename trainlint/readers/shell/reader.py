"""The shell reader assembled from its parts, and its entry point."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Dict, Optional, Tuple, Union

from trainlint.core import Diagnostic, DiagnosticKind, Origin
from trainlint.readers.facts import Launch, ScriptCall, ShellScript
from trainlint.readers.shell.arguments import ScriptCallsMixin
from trainlint.readers.shell.arithmetic import ArithmeticMixin
from trainlint.readers.shell.assignments import AssignmentsMixin
from trainlint.readers.shell.commands import CommandsMixin
from trainlint.readers.shell.continuations import ContinuationsMixin
from trainlint.readers.shell.evaluated import EvalMixin
from trainlint.readers.shell.expansion import ExpansionMixin
from trainlint.readers.shell.heredocs import HeredocsMixin
from trainlint.readers.shell.inner_shells import InnerShellsMixin
from trainlint.readers.shell.launches import LaunchesMixin
from trainlint.readers.shell.read_builtin import ReadBuiltinMixin
from trainlint.readers.shell.recovery import parse_script
from trainlint.readers.shell.slurm import SlurmMixin
from trainlint.readers.shell.statements import StatementsMixin
from trainlint.readers.shell.values import Ctx, Doc, ScriptArguments, State
from trainlint.readers.shell.words import WordsMixin
from trainlint.readers.shell.written_files import WrittenFilesMixin
from trainlint.readers.source import SourceText, read_source


def read_shell(path: Union[str, Path], caller: Optional[ScriptCall] = None) -> ShellScript:
    """Everything trainlint needs from a shell launcher; run by `caller` with its arguments when one is given.
    Never raises."""
    source = read_source(path)
    if isinstance(source, Diagnostic):
        return ShellScript(path=source.path, launches=(), diagnostics=(source,))
    arguments = ScriptArguments(caller.arguments, caller.complete) if caller is not None else None
    try:
        return ShellReader(source, arguments).read()
    except RecursionError:  # pathological nesting: report it instead of crashing
        diagnostic = Diagnostic(DiagnosticKind.UNMODELLED_CONSTRUCT, f"{source.path} nests too deeply to be read",
                                source.path)
        return ShellScript(path=source.path, launches=(), diagnostics=(diagnostic,))


def _values(launch: Launch) -> Tuple:
    """What a launch passes, whatever the provenance of each value."""
    words = (*launch.launcher_args, *((launch.entry,) if launch.entry is not None else ()), *launch.script_args)
    return (tuple(repr(word.value) for word in words),
            tuple((name, repr(setting.value)) for name, setting in sorted(launch.env.items())))


class ShellReader(
    StatementsMixin,
    AssignmentsMixin,
    CommandsMixin,
    ReadBuiltinMixin,
    HeredocsMixin,
    WordsMixin,
    ExpansionMixin,
    ArithmeticMixin,
    LaunchesMixin,
    InnerShellsMixin,
    EvalMixin,
    ScriptCallsMixin,
    ContinuationsMixin,
    SlurmMixin,
    WrittenFilesMixin,
):
    """Reads one script: each concern is a mixin; they share the state of `ReaderBase`."""

    def __init__(self, source: SourceText, arguments: Optional[ScriptArguments] = None) -> None:
        super().__init__(source)
        self.arguments = arguments

    def read(self) -> ShellScript:
        parsed = parse_script(self.source.data)
        doc = Doc(parsed.data, parsed.tree.root_node)
        self.masked_expansions = {mask.span for mask in parsed.masks if mask.what == "expansion"}
        self._report_parse_problems(parsed, doc)
        sbatch = self._read_sbatch(doc)
        state = State(arguments=self.arguments)
        ctx = Ctx(doc)
        self._exec(doc.root, ctx, state)
        self._run_uncalled_functions(state, ctx)
        return ShellScript(
            path=self.source.path,
            launches=self._ordered_launches(),
            sbatch=sbatch,
            flows=tuple(dict.fromkeys(self.flows)),
            diagnostics=tuple(self.diagnostics),
            calls=self._distinct_calls(),
        )

    def _ordered_launches(self) -> Tuple[Launch, ...]:
        """Each command once, or once per set of values when functions run it with different arguments (each such
        launch naming the calls that gave them)."""
        by_command: Dict[Origin, Dict[Tuple, Launch]] = {}
        for launch in self.launches:
            by_command.setdefault(launch.origin, {}).setdefault(_values(launch), launch)
        kept = []
        for variants in by_command.values():
            launches = list(variants.values())
            if len(launches) == 1:
                kept.append(replace(launches[0], called_at=()))
                continue
            # One launch per call chain: values that differ without a call to tell them apart (a branch) are the
            # first reading's, as a command read once is.
            by_calls: Dict[Tuple[Origin, ...], Launch] = {}
            for launch in launches:
                by_calls.setdefault(launch.called_at, launch)
            kept.extend(by_calls.values())
        return tuple(sorted(kept, key=lambda launch: (launch.origin.start_byte,
                                                       [call.start_byte for call in launch.called_at])))

    def _distinct_calls(self) -> Tuple[ScriptCall, ...]:
        """Each call once (a function's body may be read twice), in the order of the file."""
        seen: Dict[Origin, ScriptCall] = {}
        for call in self.calls:
            seen.setdefault(call.origin, call)
        return tuple(seen.values())

    def _run_uncalled_functions(self, state: State, ctx: Ctx) -> None:
        # A function that is defined but never called (dispatch through "$1") may still hold the launch.
        for name, (body, doc) in list(state.functions.items()):
            if name not in self.called_functions:
                self.called_functions.add(name)
                self._call_body(body, replace(ctx, doc=doc, function_depth=1), replace(state.copy(), arguments=None))
