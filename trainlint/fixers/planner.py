"""From a finding's fix (knob changes in the language of the domain) to byte edits at the origins
the settings graph names. Planning never writes: it reads the bytes an edit is planned against."""
from __future__ import annotations

import re
from contextlib import suppress
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Callable, Dict, FrozenSet, List, Optional, Sequence, Tuple

from trainlint.checks._deepspeed_keys import batch_key_changes
from trainlint.core import (
    RECIPE_LAUNCHERS,
    Applicability,
    Edit,
    Finding,
    Fix,
    KnobChange,
    Launcher,
    ReplacedBy,
    Setting,
    SourceKind,
    TrainingRun,
    Unknown,
    Value,
)
from trainlint.fixers import editors
from trainlint.fixers.derived import value_after_edits
from trainlint.fixers.editors import CannotRender, Refused, file_kind, same_value
from trainlint.fixers.editors.common import ComputedValue, spelling
from trainlint.fixers.edits import by_path, collide, merged_insertions, origin_of
from trainlint.fixers.own_configs import copy_target, with_own_config
from trainlint.fixers.shared_configs import CONFIG_KINDS, OutsideReaders, outside_readers_problem
from trainlint.fixers.sibling_configs import ZERO_KNOBS, sibling_config
from trainlint.formats import FileKind
from trainlint.knobs import K
from trainlint.linter import LintResult
from trainlint.memory.plans import (
    LauncherCount,
    Plan,
    PortPlan,
    as_count,
    chosen_plan,
    count_devices,
    launcher_gpu_count,
    plan_port,
)

# Findings whose fix is the job's port plan: the memory rules and the GPU-count rule. The plan changes
# several knobs at once (a rule's single change is planned against the job as it is).
PORT_PLAN_CODES = frozenset({"TL101", "TL106", "TL108", "TL111", "TL112", "TL113", "TL203"})
# The knobs a port plan writes into a DeepSpeed config when the config does not name them yet.
_DEEPSPEED_INSERTS = {"offload_optimizer": "offload_optimizer", "offload_param": "offload_param"}

# Knobs the fix engine never writes: they describe the machine, not the recipe.
_NOT_WRITABLE = {K.WORLD_SIZE, K.NUM_NODES}
# Pins whose place is not a value the user wrote: editing them would rewrite code, not a setting.
_INSERT_INSTEAD = {SourceKind.FRAMEWORK_DEFAULT, SourceKind.ASSUMED, SourceKind.DERIVED}
_BELOW_LAUNCHER = {SourceKind.CONFIG_FILE, SourceKind.CODE_KEYWORD, SourceKind.DATACLASS_DEFAULT,
                   SourceKind.ARGPARSE_DEFAULT, SourceKind.PARAMETER_DEFAULT, SourceKind.ENVIRONMENT,
                   SourceKind.SBATCH}
# Defaults an entry script declares for its own options.
_SCRIPT_DEFAULTS = {SourceKind.DATACLASS_DEFAULT, SourceKind.ARGPARSE_DEFAULT, SourceKind.PARAMETER_DEFAULT}


def _check_called_script(run: TrainingRun, edits: List[Edit]) -> None:
    """No edit of a script another one runs with its arguments: the caller's values are this job's, the called
    script's are every caller's (and its own, run by itself)."""
    if run.called_by is not None and any(edit.origin.path == run.path for edit in edits):
        raise Refused(f"{run.path} is run by {run.called_by.path}:{run.called_by.line} with its arguments and may be "
                      f"run by other scripts too; change it by hand, or in the caller")


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
        return self.applicability >= (Applicability.UNSAFE if unsafe else Applicability.SAFE)


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

    def __init__(self, result: LintResult, edited: FrozenSet[Path] = frozenset()) -> None:
        self.result = result
        # Files earlier rounds of this fix rewrote in place (resolved): no sibling config to point a job at, since
        # what they hold now was planned for other jobs.
        self.edited = edited
        self.runs: Dict[str, TrainingRun] = {run.id: run for run in result.scan.runs}
        self.read = _FileCache()
        self._ports: Dict[str, Optional[PortPlan]] = {}
        self._chosen: Dict[str, Optional[Plan]] = {}
        self._outside = OutsideReaders(result.scan.scanned)

    # ------------------------------------------------------------ port plans
    def port(self, run_id: str) -> Optional[PortPlan]:
        """The port plan of one job onto the target the lint ran against (computed once)."""
        if run_id not in self._ports:
            run, target = self.runs.get(run_id), self.result.target
            self._ports[run_id] = None if run is None or target is None else plan_port(
                run, target.gpu, target.num_gpus, unsafe=True, global_batch=target.global_batch)
        return self._ports[run_id]

    def chosen(self, run_id: str) -> Optional[Plan]:
        """The plan `port(run_id)` chooses, without the runners-up a fix does not need (computed once)."""
        if run_id not in self._chosen:
            if run_id in self._ports:
                port = self._ports[run_id]
                self._chosen[run_id] = port.chosen if port is not None else None
            else:
                run, target = self.runs.get(run_id), self.result.target
                self._chosen[run_id] = None if run is None or target is None else chosen_plan(
                    run, target.gpu, target.num_gpus, global_batch=target.global_batch)
        return self._chosen[run_id]

    def _port_fix(self, finding: Finding) -> Optional[PlannedFix]:
        chosen = self.chosen(finding.run_id or "")
        if chosen is None:
            return None
        run = self.runs[finding.run_id]
        if finding.fix is not None and _same_changes(finding.fix, chosen):
            return None  # the rule's own fix is the plan: keep its words
        fix = port_fix(run, chosen)
        finding = replace(finding, fix=fix)
        try:
            return PlannedFix(finding, self._port_edits(finding), fix.applicability)
        except Refused as refusal:
            # A shared DeepSpeed config: the repository may hold the one the plan needs beside it.
            swapped, near = self._through_sibling_config(run, finding, chosen)
            if swapped is not None:
                try:
                    return PlannedFix(swapped, self._swap_edits(swapped), fix.applicability)
                except Refused:
                    pass
            # None beside it: a copy of the job's own (own_configs).
            own, why_not = self._through_own_config(run, finding)
            if own is not None:
                return own
            # A copy refused for the reason the port itself is (a node count apart) adds nothing to say.
            why_not = f" ({why_not})" if why_not and why_not != str(refusal) else ""
            return PlannedFix(finding, (), Applicability.DISPLAY_ONLY, f"{refusal}{near}{why_not}")

    def _swap_edits(self, swapped: Finding) -> Tuple[Edit, ...]:
        """The edits of a port through another config. The new path never writes over a shell expansion: of a path
        built from variables (`${DS_DIR}/zero2.json`) only the file name changes, and one that does not end in it is
        left to a person (written out whole, it would stop following them)."""
        return _expansions_kept(self._port_edits(swapped), swapped.fix, self.read)

    def _port_edits(self, finding: Finding) -> Tuple[Edit, ...]:
        edits = merged_insertions(self._change_edits(finding, port=True))
        _check_consistent(edits)
        self._check_outside_readers(finding, edits)
        return tuple(edits)

    def _through_sibling_config(self, run: TrainingRun, finding: Finding,
                                chosen: Plan) -> Tuple[Optional[Finding], str]:
        """The finding with its ZeRO changes made by pointing the job's `--deepspeed` at a config beside its own
        that holds them (sibling_configs), the path written as before with the file name changed; or, when none
        may be taken, a note on one that holds the plan but changes more."""
        changes = finding.fix.changes
        target = copy_target(run, changes)  # the job's config, as its command line names it
        if target is None or self.result.target is None or not self._config_refused(run, changes):
            return None, ""
        planned = {change.knob: change.new for change in changes if change.knob in ZERO_KNOBS}
        current, written = Path(target.config).name, target.written
        search = sibling_config(run, planned, chosen.overrides, self.result.target.gpu, self.edited)
        if search.found is None:
            near = f" ({search.near} holds the plan, but also changes {', '.join(search.differs_in)})" \
                if search.near is not None else ""
            return None, near
        path = written[:len(written) - len(current)] + search.found.name
        kept = tuple(change for change in changes if change.knob not in ZERO_KNOBS)
        fix = replace(finding.fix, changes=(*kept, KnobChange(K.DEEPSPEED, written, path)))
        return replace(finding, fix=fix), ""

    def _through_own_config(self, run: TrainingRun, finding: Finding) -> Tuple[Optional[PlannedFix], str]:
        """The port with the settings the job reads from its shared DeepSpeed config written into a copy of that
        config, and the job's `--deepspeed` pointed at the copy (own_configs); else None, and why not when a copy was
        tried."""
        target = copy_target(run, finding.fix.changes)
        if target is None or not self._config_refused(run, finding.fix.changes):
            return None, ""
        try:
            fix, creation = with_own_config(run, finding.fix, target, self.read, partial(_rewrite, read=self.read))
            swapped = replace(finding, fix=fix)
            return PlannedFix(swapped, (*self._swap_edits(swapped), *creation), fix.applicability), ""
        except Refused as refusal:
            return None, str(refusal)

    def _config_refused(self, run: TrainingRun, changes: Tuple[KnobChange, ...]) -> bool:
        """Whether a ZeRO change of the plan cannot be written where the job's config holds it (other jobs of the
        scan, or launchers it did not read, name the config): the refusal a sibling config or a copy of the job's
        own answers (not a GPU count over several nodes, say)."""
        for change in changes:
            if change.knob in ZERO_KNOBS:
                together = tuple(other.knob for other in changes if other.knob != change.knob)
                try:
                    edits = self.change(run, change, together, port=True)
                except Refused:
                    return True
                if any(file_kind(edit.origin.path) in CONFIG_KINDS and self._outside.naming(edit.origin.path)
                       for edit in edits):
                    return True
        return False

    # ------------------------------------------------------------ findings
    def plan(self, finding: Finding) -> Optional[PlannedFix]:
        if finding.code in PORT_PLAN_CODES and finding.run_id:
            planned = self._port_fix(finding)
            if planned is not None:
                return planned
        fix = finding.fix
        if fix is None:
            return None
        if fix.applicability == Applicability.DISPLAY_ONLY:
            return PlannedFix(finding, (), Applicability.DISPLAY_ONLY)
        if not fix.changes and not fix.edits:
            return PlannedFix(finding, (), Applicability.DISPLAY_ONLY, "the fix names no change")
        try:
            # A memory rule's values fit the job to the machine asked about: like a port's, they go on this job's
            # command rather than into an entry script default every other launch of it reads.
            edits = self._text_edits(finding) + self._change_edits(finding, port=finding.code in PORT_PLAN_CODES)
            _check_consistent(edits)
            self._check_outside_readers(finding, edits)
        except Refused as refusal:
            return PlannedFix(finding, (), Applicability.DISPLAY_ONLY, str(refusal))
        if not edits:
            return PlannedFix(finding, (), fix.applicability)  # the values are already written
        return PlannedFix(finding, tuple(edits), fix.applicability)

    def _check_outside_readers(self, finding: Finding, edits: List[Edit]) -> None:
        """No edit of a config file that launchers the check did not read name too (shared_configs.py); the job's own
        recipe is its own."""
        run = self.runs.get(finding.run_id or "")
        own = {run.path} if run is not None else set()
        for path in dict.fromkeys(edit.origin.path for edit in edits):
            if path not in own and file_kind(path) in CONFIG_KINDS:
                readers = self._outside.naming(path)
                if readers:
                    raise Refused(outside_readers_problem(path, readers))

    def _text_edits(self, finding: Finding) -> List[Edit]:
        edits = []
        for edit in finding.fix.edits:
            data = self.read(edit.origin.path)
            if data is None or edit.origin.end_byte > len(data) or edit.origin.start_byte > edit.origin.end_byte:
                raise Refused(f"{edit.origin.path} changed since it was read")
            if data[edit.origin.start_byte:edit.origin.end_byte] != edit.content.encode("utf-8"):
                edits.append(edit)
        return edits

    def _change_edits(self, finding: Finding, port: bool = False) -> List[Edit]:
        if not finding.fix.changes:
            return []
        run = self.runs.get(finding.run_id or "")
        if run is None:
            raise Refused("the fix belongs to no resolved job")
        edits: List[Edit] = []
        computed: List[Tuple[KnobChange, ComputedValue]] = []
        knobs = [change.knob for change in finding.fix.changes]
        for change in finding.fix.changes:
            together = tuple(name for name in knobs if name != change.knob)
            try:
                edits.extend(self.change(run, change, together, port))
            except ComputedValue as refusal:
                computed.append((change, refusal))
        for change, refusal in computed:
            if not self._follows_inputs(run, change, edits):
                raise refusal
        _check_called_script(run, edits)
        self._check_launcher_values(run, finding.fix.changes, edits)
        return edits

    def _check_launcher_values(self, run: TrainingRun, changes: Tuple[KnobChange, ...], edits: List[Edit]) -> None:
        """Every knob the fix names reads, in the launcher edited in memory, the value the fix wants: an edit at a
        place several knobs share (a GPU count a computed accumulation also reads) must not move one of them
        elsewhere. A word the edits replace, or one the launcher no longer holds, is not checked here."""
        for change in changes:
            winner = run.settings.get(change.knob)
            after = self._launcher_value_after(winner, edits)
            if after is not None and same_value(after, change.new) is False \
                    and same_value(after, winner.value) is not True:
                raise Refused(f"the edits would leave {change.knob} at {after!r} at {winner.origin}, not "
                              f"{change.new!r}; change it by hand")

    def _follows_inputs(self, run: TrainingRun, change: KnobChange, edits: List[Edit]) -> bool:
        """Whether a value the launcher computes from other settings comes out as `change.new` once the
        fix's other edits (its inputs among them) are applied: then it needs no edit of its own."""
        return same_value(self._launcher_value_after(run.settings.get(change.knob), edits), change.new) is True

    def _launcher_value_after(self, winner: Optional[Setting], edits: List[Edit]) -> Optional[Value]:
        """What the launcher word `winner` is written at holds once `edits` are applied, read again in memory;
        None when it is not a launcher word, its file is not edited or cannot be read, or the word is gone."""
        if winner is None or winner.origin is None or file_kind(winner.origin.path) != FileKind.SHELL \
                or not any(edit.origin.path == winner.origin.path for edit in edits):
            return None
        data = self.read(winner.origin.path)
        return value_after_edits(data, edits, winner.origin) if data is not None else None

    # ------------------------------------------------------------ one knob
    def change(self, run: TrainingRun, change: KnobChange, together: Tuple[str, ...] = (),
               port: bool = False) -> List[Edit]:
        """Edits that give `change.knob` its new value; `together` are the other knobs the same fix
        changes (a place they share with this knob may be edited for all of them). `port`: the change fits the
        job to a machine, so it belongs to this launch, not to every launch of its entry script."""
        knob, new = change.knob, change.new
        if knob == K.WORLD_SIZE:
            return self._gpu_count(run, new, together)
        if knob in _NOT_WRITABLE:
            raise Refused(f"{knob} is a property of the machine, not a setting to rewrite")
        if new is None or isinstance(new, Unknown):
            raise Refused(f"no value to write for {knob}")
        winner = run.settings.get(knob)
        if winner is not None and winner.origin is not None and winner.kind not in _INSERT_INSTEAD:
            if same_value(winner.value, new):
                return []
            if winner.kind == SourceKind.ARGPARSE_DEFAULT and _switch_default(run, knob):
                # `action="store_true"` implies the default; the launch gives the switch instead.
                return [self._insert(run, knob, new)]
            if port and winner.kind in _SCRIPT_DEFAULTS and _passes_flags(run):
                # The entry script's default is every launch's that leaves the option out, those no scan reads among
                # them (a README's command, a user's own); a machine's values go on this job's command.
                with suppress(Refused):  # no place for a flag there: the default, where only this job reads it
                    return [self._insert(run, knob, new)]
            return [self._replace_at(run, knob, winner, new, together)]
        if knob.startswith("ds_"):
            if new == "auto":
                return []  # nothing pins it: DeepSpeed already takes the trainer's value
            raise Refused(f"the DeepSpeed config does not set {knob}; add it by hand")
        if knob in _DEEPSPEED_INSERTS:
            return [self._deepspeed_insert(run, knob, new)]
        if winner is not None and same_value(winner.value, new):
            return []
        return [self._insert(run, knob, new)]

    def _deepspeed_insert(self, run: TrainingRun, knob: str, new: Value) -> Edit:
        """`zero_optimization.<knob>` added to the DeepSpeed config the job's ZeRO stage comes from."""
        stage = run.setting(K.ZERO_STAGE)
        if stage is None or stage.kind != SourceKind.CONFIG_FILE or stage.origin is None \
                or file_kind(stage.origin.path) != FileKind.JSON:
            raise Refused(f"no DeepSpeed JSON config to add {knob} to")
        if len(self.result.scan.graph.runs_touching(stage.origin.path)) > 1:
            raise Refused(f"{stage.origin.path} is shared with other jobs; add {knob} by hand")
        return editors.json.insert_offload(stage.origin.path, _DEEPSPEED_INSERTS[knob], new, self.read)

    def _gpu_count(self, run: TrainingRun, new: Value, together: Tuple[str, ...] = ()) -> List[Edit]:
        """The launcher's GPU count rewritten where it is stated: the number, or the device list."""
        stated = launcher_gpu_count(run)
        if stated is None:
            return []  # the launcher states none: the machine decides
        if not isinstance(new, int) or new < 1:
            raise Refused(f"no GPU count to write: {new!r}")
        if stated.count == new:
            return []
        if run.known(K.USE_VLLM) is True:
            # vLLM generates on the same machine (colocated with the training processes, or a server on the GPUs
            # they leave), laid out by settings of its own (its tensor-parallel size, its memory share).
            raise Refused("the job generates with vLLM, whose GPU layout is set apart; change its GPU count by hand")
        if stated.nodes != 1:
            return [self._one_machine(run, stated, new, together)]
        edits = [self._rewrite_count(run, stated, new, together)]
        visible = run.facts.visible_devices
        if not stated.devices and visible is not None and visible is not stated.source:
            listed = count_devices(visible.value) if isinstance(visible.value, str) else None
            if listed is None or listed < new:
                # More processes than the devices the launch sees fail at start-up (`invalid device ordinal`):
                # the list grows with the count, when it names the first GPUs in order.
                where = f" at {visible.origin}" if visible.origin is not None else ""
                try:
                    edits.append(self._rewrite_count(run, LauncherCount(listed or 0, visible, True), new, together))
                except Refused:
                    raise Refused(f"the launch sees only the GPUs CUDA_VISIBLE_DEVICES{where} lists, and the list "
                                  f"cannot grow to {new} without choosing which; change it and the count by hand"
                                  ) from None
        return edits

    def _one_machine(self, run: TrainingRun, stated: LauncherCount, new: int, together: Tuple[str, ...]) -> Edit:
        """A launch over several nodes ported to one machine of the same shape (`new` GPUs, as many as each of
        its nodes has) when its node count follows its GPU count: `GPUS=${GPUS:-512}`,
        `NODES=$((GPUS / GPUS_PER_NODE))`, `srun --nodes=${NODES} --ntasks=${GPUS}`. The count alone is
        rewritten, and the launcher, read again with the edit, must then run `new` processes on one node. A node
        count written on its own (`--nnodes 2`, a hostfile, `#SBATCH --nodes`) stays for a person to change."""
        by_hand = f"the launch spans {stated.nodes} nodes; change its GPU count by hand"
        per_node, uneven = divmod(stated.count, stated.nodes)
        if uneven:
            raise Refused(f"{by_hand} (its {stated.count} GPUs are not the same on each node)")
        if new != per_node:
            raise Refused(f"{by_hand} (each of its nodes has {per_node} GPUs, the machine {new})")
        nodes = stated.node_source
        if nodes is None or nodes.origin is None:
            raise Refused(by_hand)
        if as_count(stated.source.value) == new:
            # The GPU count is stated per node (torchrun's --nproc_per_node): the node count is what differs.
            raise Refused(f"{by_hand}: its node count at {nodes.origin} is written on its own")
        try:
            edit = self._rewrite_count(run, stated, new, together)
        except Refused as refused:
            raise Refused(f"{by_hand} ({refused})") from None
        nodes_after = _option_value(self._launcher_value_after(nodes, [edit]))
        count_after = _option_value(self._launcher_value_after(stated.source, [edit]))
        if as_count(nodes_after) != 1 or as_count(count_after) != new:
            raise Refused(f"{by_hand}: its node count at {nodes.origin} does not follow the GPU count")
        return edit

    def _rewrite_count(self, run: TrainingRun, stated: LauncherCount, new: int,
                       together: Tuple[str, ...] = ()) -> Edit:
        chain = [s for s in _chain(stated.source) if s.origin is not None]
        graph = self.result.scan.graph
        # A count the fix's other knobs also read (`GRADIENT_ACC=$((BATCH / PER_DEVICE / GPUS))`) may be
        # edited at its source: each of those knobs gets its own new value, or is checked to follow it.
        target = next((s for s in reversed(chain) if graph.is_exclusive(s.origin, run.id, K.WORLD_SIZE, together)
                       and not isinstance(s.value, Unknown) and same_value(s.value, stated.source.value)), None)
        if target is None:
            raise Refused(f"the GPU count at {stated.source.origin} is shared with other jobs; change it by hand")
        _refuse_past_a_fallback(_chain(stated.source), target, K.WORLD_SIZE, new)
        machine = self.result.target.num_gpus if self.result.target is not None else None
        value: Value = first_devices(str(target.value), new, machine) if stated.devices else new
        if value is None or same_value(value, target.value):
            # A device list can grow only when it names the first GPUs in order: which others to add is not told.
            raise Refused(f"the device list `{target.value}` at {target.origin} cannot name {new} GPUs without "
                          f"choosing which; change it by hand")
        return _rewrite(target, value, self.read)

    def _replace_at(self, run: TrainingRun, knob: str, winner: Setting, new: Value,
                    together: Tuple[str, ...] = ()) -> Edit:
        target = self._target(run, knob, winner, new, (*together, *_followers(run, knob, winner)))
        _refuse_past_a_fallback(_chain(winner), target, knob, new)
        if target is not None and target.origin is not None and file_kind(target.origin.path) == FileKind.PYTHON \
                and target.origin.path != run.path and self._outside.naming(target.origin.path):
            # An entry script that launchers the check did not read run too: its default is theirs as well.
            target = None
        if target is None:
            if winner.kind in _BELOW_LAUNCHER and _passes_flags(run):
                # The value is shared with other jobs: a flag on this job's command overrides it here only.
                try:
                    return self._insert(run, knob, new)
                except Refused as refused:
                    raise Refused(f"{knob} is written at {winner.origin}, which other jobs or settings also use, "
                                  f"and {refused}; change it by hand") from None
            raise Refused(f"{knob} is written at {winner.origin}, which other jobs or settings also use; "
                          f"no place changes this job alone")
        return _rewrite(target, new, self.read)

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

    def _insert(self, run: TrainingRun, knob: str, new: Value) -> Edit:
        if run.origin is None:
            raise Refused(f"nothing sets {knob} and the job has no file to add it to")
        kind = file_kind(run.origin.path)
        if run.launcher in RECIPE_LAUNCHERS and kind == FileKind.YAML:
            return editors.yaml.insert_key(run, knob, new, self.read)
        if run.launcher == Launcher.AXOLOTL and run.recipe is not None:
            # A recipe the command runs: the new key goes there, when no other job reads it.
            if len(self.result.scan.graph.runs_touching(run.recipe)) > 1:
                raise Refused(f"nothing sets {knob}, and {run.recipe} is shared with other jobs; add it by hand")
            return editors.yaml.insert_key(run, knob, new, self.read, run.recipe)
        if run.launcher == Launcher.PYTHON and kind == FileKind.PYTHON:
            return editors.python.insert_keyword(run, knob, new, self.read)
        if kind == FileKind.SHELL:
            return editors.shell.insert_flag(run, knob, new, self.read)
        raise Refused(f"nothing sets {knob}, and trainlint does not add settings to {run.origin.path}")


def _rewrite(target: Setting, new: Value, read: Callable[[str], Optional[bytes]]) -> Edit:
    """The edit that writes `new` over the value `target` holds, refused when the file no longer holds it."""
    origin = target.origin
    if isinstance(target.value, Unknown):
        raise Refused(f"the value at {origin} is computed ({target.value.reason}); change it by hand")
    data = read(origin.path)
    if data is None:
        raise Refused(f"cannot read {origin.path}")
    if origin.end_byte > len(data) or origin.start_byte >= origin.end_byte:
        raise Refused(f"{origin.path} changed since it was read")
    raw = data[origin.start_byte:origin.end_byte].decode("utf-8", errors="replace")
    if target.text and not _matches(raw, target.text):
        raise Refused(f"{origin} no longer reads `{target.text}`")
    try:
        return editors.replace_value(data, target, raw, new)
    except CannotRender as error:
        raise Refused(f"cannot write {new!r} at {origin}: {error}") from error


def _switch_default(run: TrainingRun, knob: str) -> bool:
    """Whether the knob's default is that of an argparse switch of the entry script (no value to rewrite)."""
    try:
        name = spelling(run, knob, guess=False)
    except Refused:
        return False
    return editors.shell.switch_option(run, name) is not None


# A value the script falls back to when its caller does not give one (`${1:-16}`, `${GPUS:-8}`): the caller's is
# part of how the script is run (a README's `bash run.sh 16 0 125m 4`, a sweep's `GPUS=4 bash train.sh`).
_CALLER_GIVEN = (ReplacedBy.CALLER_ARGUMENT, ReplacedBy.ENVIRONMENT)


def _refuse_past_a_fallback(chain: Sequence[Setting], target: Optional[Setting], knob: str, new: Value) -> None:
    """Refuse an edit below a fallback on the way to it that only passes the fallback's value on (the word `${BS}`
    of `BS=${1:-16}`): a value written there would replace whatever every caller passes, not only the default. The
    fallback itself may be edited, and so may a word that adds to it (`${DS_DIR}/zero2.json`, whose file name the
    editors change alone)."""
    if target is None:
        return
    upstream = False
    for setting in chain:
        if setting is target:
            upstream = True
        elif upstream and setting.fallback is not None and setting.fallback.replaced_by in _CALLER_GIVEN \
                and same_value(target.value, setting.value):
            given = "the caller" if setting.fallback.replaced_by == ReplacedBy.CALLER_ARGUMENT else "the environment"
            raise Refused(f"{knob} comes from the default `{setting.text}` of `${setting.fallback.variable}` at "
                          f"{setting.origin}, which {given} may set; its other uses keep it from being edited there, "
                          f"and writing {new} at {target.origin} would override what {given} sets: change it by hand")


def _chain(setting: Setting) -> List[Setting]:
    out = [setting]
    while len(out[-1].via) == 1:
        out.append(out[-1].via[0])
    return out


def _followers(run: TrainingRun, knob: str, winner: Setting) -> Tuple[str, ...]:
    """The knobs the framework derives from `winner` alone (axolotl's eval batch is its micro-batch):
    they follow an edit of it, as they would follow the value written there."""
    return tuple(name for name, setting in run.settings.items()
                 if name != knob and setting.kind == SourceKind.DERIVED and setting.origin is None
                 and winner.origin is not None and len(setting.via) == 1 and setting.via[0].origin == winner.origin)


def _passes_flags(run: TrainingRun) -> bool:
    return (run.origin is not None and file_kind(run.origin.path) == FileKind.SHELL
            and run.launcher not in RECIPE_LAUNCHERS and run.origin.end_byte > run.origin.start_byte)


def _matches(raw: str, text: str) -> bool:
    """The bytes at an origin still say what the reader saw (quotes aside)."""
    return raw == text or raw.strip("\"'") == text.strip("\"'") or raw.endswith(text) or text.endswith(raw)


def _expansions_kept(edits: Tuple[Edit, ...], fix: Fix, read) -> Tuple[Edit, ...]:
    """`edits`, the one that writes the fix's new DeepSpeed path over a word built from variables narrowed to the file
    name (`_swap_edits`)."""
    path = next(change for change in fix.changes if change.knob == K.DEEPSPEED)
    kept = []
    for edit in edits:
        data = read(edit.origin.path) or b""
        if edit.content == path.new and re.search(rb"[$`]", data[edit.origin.start_byte:edit.origin.end_byte]):
            edit = _file_name_edit(edit, data, Path(str(path.old)).name, Path(str(path.new)).name)
        kept.append(edit)
    return tuple(kept)


def _file_name_edit(edit: Edit, data: bytes, old_name: str, new_name: str) -> Edit:
    """`edit` of a path word built from variables, narrowed to the file name it ends in (closing quotes aside)."""
    start, end, old = edit.origin.start_byte, edit.origin.end_byte, old_name.encode("utf-8")
    word = data[start:end]
    at = word.rfind(old)
    if at < 0 or word[at + len(old):].strip(b"\"'") or (at > 0 and word[at - 1:at] != b"/"):
        raise Refused(f"the DeepSpeed config's path at {edit.origin} is built from variables")
    return Edit(origin_of(edit.origin.path, data, start + at, start + at + len(old)), new_name)


def _check_consistent(edits: List[Edit]) -> None:
    """One fix must not ask for two different contents at the same place."""
    for path_edits in by_path(edits).values():
        for index, edit in enumerate(path_edits):
            for other in path_edits[index + 1:]:
                if collide(edit, other):
                    raise Refused(f"the fix would edit {edit.origin} twice")


def planned_finding(planned: PlannedFix) -> Finding:
    """The finding with its fix carrying every planned edit (then the rule's own text repairs that are
    already written) and, when nothing can be edited, saying why."""
    finding = planned.finding
    fix = finding.fix
    if fix is None:
        return finding
    if planned.problem and not planned.edits and fix.applicability != Applicability.DISPLAY_ONLY:
        fix = replace(fix, applicability=Applicability.DISPLAY_ONLY,
                      message=f"{fix.message} (not applied automatically: {planned.problem})")
    edits = list(planned.edits)
    edits.extend(edit for edit in fix.edits if edit not in edits)
    return replace(finding, fix=replace(fix, edits=tuple(edits)))


def _same_changes(fix: Fix, plan: Plan) -> bool:
    own = {change.knob: change.new for change in fix.changes if not change.knob.startswith("ds_")}
    return bool(own) and own == plan.overrides


def first_devices(spec: str, count: int, machine: Optional[int] = None) -> Optional[str]:
    """`localhost:0-7` -> `localhost:0-3`, `0,1,2,3,4,5,6,7` -> `0,1,2,3`: the first `count` devices, in
    the form the list was written. A list grows (`0,1,2,3` -> `0,1,...,7`) when it names devices 0 to n-1
    in order, the GPUs any machine with `count` of them has, or when `count` is all `machine` has
    (`4,5,6,7` -> `0,1,...,7` on an 8-GPU machine); otherwise None: which to add is not told. Cut to a machine
    of `machine` GPUs, only devices it has are kept (`localhost:4,5,6,7` -> `localhost:0,1` on two GPUs: the
    launcher refuses a slot the machine lacks), and None when that leaves a choice."""
    host, colon, slots = spec.rpartition(":")
    prefix = host + colon
    items = slots.split(",")
    devices: List[int] = []
    for item in items:
        low, dash, high = item.partition("-")
        devices.extend(range(int(low), int(high) + 1) if dash else [int(low)])
    if count > len(devices):
        if devices != list(range(len(devices))) and count != machine:
            return None
        devices = list(range(count))
    if machine is not None and any(device >= machine for device in devices[:count]):
        present = [device for device in devices if device < machine]
        if len(present) >= count:
            devices = present
        elif count == machine:
            devices = list(range(count))
        else:
            return None
    if len(items) == 1 and "-" in slots and devices[:count] == list(range(devices[0], devices[0] + count)):
        low = devices[0]
        return f"{prefix}{low}-{low + count - 1}" if count > 1 else f"{prefix}{low}"
    return prefix + ",".join(str(n) for n in devices[:count])


def port_fix(run: TrainingRun, plan: Plan) -> Fix:
    """The knob changes of a port plan, as one fix (a DeepSpeed config's pinned batch keys kept in step with the
    trainer's)."""
    changes = [KnobChange(knob, run.value(knob), new) for knob, new in plan.overrides.items()]
    if {K.PER_DEVICE_TRAIN_BATCH_SIZE, K.GRADIENT_ACCUMULATION_STEPS, K.WORLD_SIZE} & set(plan.overrides):
        # The global train_batch_size holds; the micro-batch and accumulation keys follow the trainer's.
        micro = plan.overrides.get(K.PER_DEVICE_TRAIN_BATCH_SIZE, run.known(K.PER_DEVICE_TRAIN_BATCH_SIZE))
        accumulation = plan.overrides.get(K.GRADIENT_ACCUMULATION_STEPS, run.known(K.GRADIENT_ACCUMULATION_STEPS))
        changes += batch_key_changes(run, _whole(micro), _whole(accumulation))
    applicability = Applicability.SAFE if plan.safe else Applicability.UNSAFE
    message = (f"port plan: {plan.summary()} (estimated peak {plan.estimate.peak_gib:.1f} GiB, "
               f"relative speed {plan.relative_speed:.2f})")
    return Fix(applicability, message, tuple(changes))


def _whole(value) -> Optional[int]:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _option_value(word: Optional[Value]) -> Optional[Value]:
    """The value of a launcher word read again after edits: `8` of `--ntasks=8`, the word itself otherwise."""
    if isinstance(word, str) and word.startswith("-") and "=" in word:
        return word.partition("=")[2]
    return word
