"""From a finding's fix (knob changes in the language of the domain) to byte edits at the origins
the settings graph names. Planning never writes: it reads the bytes an edit is planned against."""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from trainlint.core import (
    Applicability,
    Edit,
    Finding,
    KnobChange,
    Origin,
    Setting,
    SourceKind,
    TrainingRun,
    Unknown,
    Value,
)
from trainlint.fixers.edits import by_path, collide
from trainlint.fixers.insert import Refused, flag_edit, keyword_edit, yaml_key_edit
from trainlint.fixers.render import PYTHON, SHELL, YAML, CannotRender, file_kind, is_bare_flag, render, same_value
from trainlint.linter import LintResult

# Knobs the fix engine never writes: they describe the machine, not the recipe.
_NOT_WRITABLE = {"world_size", "num_nodes"}
# Pins whose place is not a value the user wrote: editing them would rewrite code, not a setting.
_INSERT_INSTEAD = {SourceKind.FRAMEWORK_DEFAULT, SourceKind.ASSUMED, SourceKind.DERIVED}
_BELOW_LAUNCHER = {SourceKind.CONFIG_FILE, SourceKind.CODE_KEYWORD, SourceKind.DATACLASS_DEFAULT,
                   SourceKind.ARGPARSE_DEFAULT, SourceKind.ENVIRONMENT, SourceKind.SBATCH}
_RECIPE_LAUNCHERS = ("llamafactory-cli", "axolotl")


@dataclass(frozen=True)
class PlannedFix:
    """A finding, the byte edits that apply its fix and how safe applying them is. `problem` says
    why a fix that asks for edits has none (it is then display-only)."""

    finding: Finding
    edits: Tuple[Edit, ...]
    applicability: Applicability
    problem: str = ""

    @property
    def code(self) -> str:
        return self.finding.code

    def applies(self, unsafe: bool) -> bool:
        if not self.edits:
            return False
        return self.applicability == Applicability.SAFE or (unsafe and self.applicability == Applicability.UNSAFE)


class _FileCache:
    def __init__(self) -> None:
        self._data: Dict[str, Optional[bytes]] = {}

    def __call__(self, path: str) -> Optional[bytes]:
        if path not in self._data:
            try:
                self._data[path] = Path(path).read_bytes()
            except OSError:
                self._data[path] = None
        return self._data[path]


class Planner:
    """Plans every finding of one lint result against the files as they are now."""

    def __init__(self, result: LintResult) -> None:
        self.result = result
        self.runs: Dict[str, TrainingRun] = {run.id: run for run in result.scan.runs}
        self.read = _FileCache()

    # ------------------------------------------------------------ findings
    def plan(self, finding: Finding) -> Optional[PlannedFix]:
        fix = finding.fix
        if fix is None:
            return None
        if fix.applicability == Applicability.DISPLAY_ONLY:
            return PlannedFix(finding, (), Applicability.DISPLAY_ONLY)
        if not fix.changes and not fix.text_edits:
            return PlannedFix(finding, (), Applicability.DISPLAY_ONLY, "the fix names no change")
        try:
            edits = self._text_edits(finding) + self._change_edits(finding)
            _check_consistent(edits)
        except Refused as refusal:
            return PlannedFix(finding, (), Applicability.DISPLAY_ONLY, str(refusal))
        if not edits:
            return PlannedFix(finding, (), fix.applicability)  # the values are already written
        return PlannedFix(finding, tuple(edits), fix.applicability)

    def _text_edits(self, finding: Finding) -> List[Edit]:
        edits = []
        for edit in finding.fix.text_edits:
            data = self.read(edit.origin.path)
            if data is None or edit.origin.end_byte > len(data) or edit.origin.start_byte > edit.origin.end_byte:
                raise Refused(f"{edit.origin.path} changed since it was read")
            if data[edit.origin.start_byte:edit.origin.end_byte] != edit.content.encode("utf-8"):
                edits.append(edit)
        return edits

    def _change_edits(self, finding: Finding) -> List[Edit]:
        if not finding.fix.changes:
            return []
        run = self.runs.get(finding.run_id or "")
        if run is None:
            raise Refused("the fix belongs to no resolved job")
        edits: List[Edit] = []
        knobs = [change.knob for change in finding.fix.changes]
        for change in finding.fix.changes:
            together = tuple(name for name in knobs if name != change.knob)
            edits.extend(self.change(run, change, together))
        return edits

    # ------------------------------------------------------------ one knob
    def change(self, run: TrainingRun, change: KnobChange, together: Tuple[str, ...] = ()) -> List[Edit]:
        """Edits that give `change.knob` its new value; `together` are the other knobs the same fix
        changes (a place they share with this knob may be edited for all of them)."""
        knob, new = change.knob, change.new
        if knob in _NOT_WRITABLE:
            raise Refused(f"{knob} is a property of the machine, not a setting to rewrite")
        if new is None or isinstance(new, Unknown):
            raise Refused(f"no value to write for {knob}")
        winner = run.settings.get(knob)
        if winner is not None and winner.origin is not None and winner.kind not in _INSERT_INSTEAD:
            if same_value(winner.value, new):
                return []
            return [self._replace_at(run, knob, winner, new, together)]
        if knob.startswith("ds_"):
            if new == "auto":
                return []  # nothing pins it: DeepSpeed already takes the trainer's value
            raise Refused(f"the DeepSpeed config does not set {knob}; add it by hand")
        if winner is not None and same_value(winner.value, new):
            return []
        return [self._insert(run, knob, new)]

    def _replace_at(self, run: TrainingRun, knob: str, winner: Setting, new: Value,
                    together: Tuple[str, ...] = ()) -> Edit:
        target = self._target(run, knob, winner, new, together)
        if target is None:
            if winner.kind in _BELOW_LAUNCHER and _passes_flags(run):
                # The value is shared with other jobs: a flag on this job's command overrides it here only.
                return self._insert(run, knob, new)
            raise Refused(f"{knob} is written at {winner.origin}, which other jobs or settings also use; "
                          f"no place changes this job alone")
        return self._rewrite(target, new)

    def _target(self, run: TrainingRun, knob: str, winner: Setting, new: Value,
                together: Tuple[str, ...] = ()) -> Optional[Setting]:
        graph = self.result.scan.graph
        target = graph.fix_target(run.id, knob, winner, together)
        if target is not None and target is not winner and not same_value(target.value, winner.value):
            # The chain transforms the value on its way (arithmetic, a default): edit nearer the run.
            target = next((s for s in _chain(winner)
                           if s.origin is not None and same_value(s.value, winner.value)
                           and graph.is_exclusive(s.origin, run.id, knob, together)), None)
        if target is None and knob.startswith("ds_") and new == "auto":
            # A DeepSpeed file shared by several jobs: "auto" defers to each job's own trainer value,
            # so it is right for every one of them.
            target = winner
        return target

    def _rewrite(self, target: Setting, new: Value) -> Edit:
        origin = target.origin
        if isinstance(target.value, Unknown):
            raise Refused(f"the value at {origin} is computed ({target.value.reason}); change it by hand")
        data = self.read(origin.path)
        if data is None:
            raise Refused(f"cannot read {origin.path}")
        if origin.end_byte > len(data) or origin.start_byte >= origin.end_byte:
            raise Refused(f"{origin.path} changed since it was read")
        raw = data[origin.start_byte:origin.end_byte].decode("utf-8", errors="replace")
        if target.text and not _matches(raw, target.text):
            raise Refused(f"{origin} no longer reads `{target.text}`")
        kind = file_kind(origin.path)
        try:
            if kind == SHELL and target.kind == SourceKind.LAUNCHER_FLAG and is_bare_flag(raw):
                if not target.note.startswith("--"):
                    # A store-true switch of the script's own argparse, read directly (`bf16=args.bf16`)
                    # or negated (`fp16=not args.bf16`): `--x False` would not parse, so the switch goes.
                    return _drop_switch(data, origin, raw, target.value, new)
                content = f"{raw} {render(kind, 'True', new)}"  # HfArgumentParser: `--bf16` -> `--bf16 False`
            elif kind == PYTHON and not _is_python_literal(raw):
                raise Refused(f"`{raw}` at {origin} is code, not a literal; change it by hand")
            else:
                content = render(kind, raw, new, target.value)
        except CannotRender as error:
            raise Refused(f"cannot write {new!r} at {origin}: {error}") from error
        return Edit(origin, content)

    def _insert(self, run: TrainingRun, knob: str, new: Value) -> Edit:
        if run.origin is None:
            raise Refused(f"nothing sets {knob} and the job has no file to add it to")
        kind = file_kind(run.origin.path)
        if run.launcher in _RECIPE_LAUNCHERS and kind == YAML:
            return yaml_key_edit(run, knob, new, self.read)
        if run.launcher == "python" and kind == PYTHON:
            return keyword_edit(run, knob, new, self.read)
        if kind == SHELL:
            return flag_edit(run, knob, new, self.read)
        raise Refused(f"nothing sets {knob}, and trainlint does not add settings to {run.origin.path}")


def _chain(setting: Setting) -> List[Setting]:
    out = [setting]
    while len(out[-1].via) == 1:
        out.append(out[-1].via[0])
    return out


def _passes_flags(run: TrainingRun) -> bool:
    return (run.origin is not None and file_kind(run.origin.path) == SHELL
            and run.launcher not in _RECIPE_LAUNCHERS and run.origin.end_byte > run.origin.start_byte)


def _matches(raw: str, text: str) -> bool:
    """The bytes at an origin still say what the reader saw (quotes aside)."""
    return raw == text or raw.strip("\"'") == text.strip("\"'") or raw.endswith(text) or text.endswith(raw)


def _is_python_literal(raw: str) -> bool:
    import ast

    try:
        ast.literal_eval(raw)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return True


def _drop_switch(data: bytes, origin: Origin, raw: str, current: Value, new: Value) -> Edit:
    """Remove a store-true switch that is present, so that the knob it feeds becomes `new`. The knob
    reads the switch as it is (`current` True) or negated (`current` False)."""
    switch_after = new if current is True else not new if current is False else None
    if switch_after is not False:
        raise Refused(f"`{raw}` at {origin} is a switch of the entry script's own parser; change it by hand")
    start, end = origin.start_byte, origin.end_byte
    line_start = data.rfind(b"\n", 0, start) + 1
    line_end = data.find(b"\n", end)
    line_end = len(data) if line_end < 0 else line_end
    before, after = data[line_start:start], data[end:line_end]
    if not before.strip() and after.strip() == b"\\" and line_end < len(data):
        start, end = line_start, line_end + 1  # the switch has its own continued line: drop the line
    else:
        while start > line_start and data[start - 1:start] in (b" ", b"\t"):
            start -= 1  # and the blank that separated it from the word before
    return Edit(_byte_origin(origin.path, data, start, end), "")


def _byte_origin(path: str, data: bytes, start: int, end: int) -> Origin:
    def line_column(offset: int) -> Tuple[int, int]:
        line_start = data.rfind(b"\n", 0, offset) + 1
        return data.count(b"\n", 0, offset) + 1, len(data[line_start:offset].decode("utf-8", "replace")) + 1

    (line, column), (end_line, end_column) = line_column(start), line_column(end)
    return Origin(path, line, column, end_line, end_column, start, end)


def _check_consistent(edits: List[Edit]) -> None:
    """One fix must not ask for two different contents at the same place."""
    for path_edits in by_path(edits).values():
        for index, edit in enumerate(path_edits):
            for other in path_edits[index + 1:]:
                if collide(edit, other):
                    raise Refused(f"the fix would edit {edit.origin} twice")


def planned_finding(planned: PlannedFix) -> Finding:
    """The finding with its planned edits (and, when nothing can be edited, a fix that says why)."""
    finding = planned.finding
    fix = finding.fix
    if fix is not None and planned.problem and not planned.edits and fix.applicability != Applicability.DISPLAY_ONLY:
        fix = replace(fix, applicability=Applicability.DISPLAY_ONLY,
                      message=f"{fix.message} (not applied automatically: {planned.problem})")
    return replace(finding, fix=fix, edits=planned.edits)
