"""The settings graph: one graph over every resolved job of a scan, for the questions that need
more than one job at a time.

Provenance itself lives on each value (`Setting.via`: the settings a value was copied or computed
from, nearest first); resolution chooses each knob's winner and keeps every candidate as a pin. The
graph joins those per-job chains where they share a place in a file, so that it can answer:

- `fix_target` — the editable origin of a setting: where a fix may write so that only this job's
  knob changes (a shell variable two jobs read is not such a place);
- `runs_touching` — the jobs that read a file;
- `upstream` — the chain of settings a job's value comes from.

Nodes (typed below): a place in a file (`OriginNode`), a knob of a job (`KnobNode`), a job
(`RunNode`) and a file a job reads (`FileNode`). Edges point the way values flow: a shell
expansion into the word that holds it, an upstream setting into the one it feeds, a pinned value
into its knob, a knob and a file into their job. The networkx graph itself is `.graph`.
"""
from __future__ import annotations

from enum import Enum
from typing import Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple, Union

import networkx as nx

from trainlint.core import Origin, Setting, TrainingRun
from trainlint.readers.facts import Flow


class OriginNode(NamedTuple):
    """A value written at a byte span of a file."""

    path: str
    start_byte: int
    end_byte: int


class KnobNode(NamedTuple):
    tag: str  # always "knob"
    run_id: str
    knob: str


class RunNode(NamedTuple):
    tag: str  # always "run"
    run_id: str


class FileNode(NamedTuple):
    tag: str  # always "file"
    path: str


Node = Union[OriginNode, KnobNode, RunNode, FileNode]
NodeKey = OriginNode  # the name this module used for an origin's node


class EdgeKind(str, Enum):
    FLOW = "flow"  # a shell expansion into the word that holds it
    FLOWS_INTO = "flows-into"  # an upstream setting into the one it feeds, or a pin into its knob
    PART_OF = "part-of"  # an expansion inside a larger word whose setting a job reads
    KNOB = "knob"  # a knob into its job
    READS = "reads"  # a file into the job that reads it


def node_key(origin: Origin) -> OriginNode:
    return OriginNode(origin.path, origin.start_byte, origin.end_byte)


def knob_node(run_id: str, knob: str) -> KnobNode:
    return KnobNode("knob", run_id, knob)


def run_node(run_id: str) -> RunNode:
    return RunNode("run", run_id)


def file_node(path: str) -> FileNode:
    return FileNode("file", path)


class SettingsGraph:
    """Built from the shell flows of the scanned scripts and the resolved jobs (flows first: a job's
    chains attach to the expansions they contain)."""

    def __init__(self) -> None:
        self.graph = nx.DiGraph()
        self.runs: Dict[str, TrainingRun] = {}
        # Flow targets by file: an expansion (`$X`) may sit inside a larger word (`"$X"`, `--f=$X`)
        # whose setting is what a run reads; the expansion then flows into that word.
        self._targets: Dict[str, List[OriginNode]] = {}

    @classmethod
    def from_runs(cls, runs: Iterable[TrainingRun], flows: Iterable[Flow] = ()) -> "SettingsGraph":
        graph = cls()
        graph.add_flows(flows)
        for run in runs:
            graph.add_run(run)
        return graph

    # ------------------------------------------------------------ building
    def add_flows(self, flows: Iterable[Flow]) -> None:
        for flow in flows:
            target = node_key(flow.target)
            self.graph.add_edge(node_key(flow.source), target, kind=EdgeKind.FLOW)
            self._targets.setdefault(flow.target.path, []).append(target)

    def _add_chain(self, setting: Setting, sink: Node) -> None:
        """The setting's provenance (`via`) as edges into `sink`; a setting with no origin of its
        own (a derived value) passes its upstream settings straight through."""
        if setting.origin is None:
            for upstream in setting.via:
                self._add_chain(upstream, sink)
            return
        here = node_key(setting.origin)
        self.graph.add_node(here, setting=setting)
        self.graph.add_edge(here, sink, kind=EdgeKind.FLOWS_INTO)
        for inner in self._targets.get(setting.origin.path, ()):
            if inner != here and here[1] <= inner[1] and inner[2] <= here[2]:
                self.graph.add_edge(inner, here, kind=EdgeKind.PART_OF)
        for upstream in setting.via:
            self._add_chain(upstream, here)

    def add_run(self, run: TrainingRun) -> None:
        self.runs[run.id] = run
        job = run_node(run.id)
        self.graph.add_node(job, run=run)
        for name, pinned in run.pins.items():
            sink = knob_node(run.id, name)
            self.graph.add_edge(sink, job, kind=EdgeKind.KNOB)
            for setting in pinned:
                self._add_chain(setting, sink)
        for path in run.files:
            self.graph.add_edge(file_node(path), job, kind=EdgeKind.READS)

    # ------------------------------------------------------------ queries
    def uses(self, origin: Origin) -> List[Node]:
        """Everything the value at `origin` flows into directly."""
        key = node_key(origin)
        return list(self.graph.successors(key)) if key in self.graph else []

    def is_exclusive(self, origin: Origin, run_id: str, knob: str, together: Iterable[str] = ()) -> bool:
        """True when the value written at `origin` reaches nothing but this run's knob (and the
        knobs in `together`, which the same fix changes consistently)."""
        key = node_key(origin)
        if key not in self.graph:
            return True
        # The jobs of one launch (the script by itself, and as each caller runs it with its arguments) are that
        # launch: a value written in it is theirs alike.
        jobs = self._same_launch(run_id)
        allowed = {knob_node(job, name) for job in jobs for name in (knob, *together)}
        job_nodes = {run_node(job) for job in jobs}
        for reached in nx.descendants(self.graph, key):
            if isinstance(reached, tuple) and reached and reached[0] == "knob" and reached not in allowed:
                return False
            if reached not in allowed and reached not in job_nodes and self.graph.out_degree(reached) == 0:
                return False  # an expansion used by something that is not a knob (e.g. `--lr $((B*2))`)
        return True

    def _same_launch(self, run_id: str) -> List[str]:
        """The job and those that run the same launch command as it (a script run by wrappers, a function called
        with other arguments)."""
        run = self.runs.get(run_id)
        if run is None or run.origin is None:
            return [run_id]
        return [job for job, other in self.runs.items() if job == run_id or other.origin == run.origin]

    def fix_target(self, run_id: str, knob: str, setting: Setting, together: Iterable[str] = ()) -> Optional[Setting]:
        """The editable origin of `setting` (a value of this run's knob): the place to edit so that
        only this knob (and `together`) changes. The head of the provenance chain if it is
        exclusive, else the nearest exclusive place on the chain; None when there is none."""
        together = tuple(together)
        chain = [s for s in _linear_chain(setting) if s.origin is not None]
        for candidate in reversed(chain):
            if self.is_exclusive(candidate.origin, run_id, knob, together):
                return candidate
        return None

    def runs_touching(self, path: str) -> List[str]:
        """The ids of the jobs that read the file `path` (as shown), sorted."""
        key = file_node(path)
        if key not in self.graph:
            return []
        return sorted(n[1] for n in self.graph.successors(key) if n[0] == "run")

    def upstream(self, run_id: str, knob: str) -> Tuple[Setting, ...]:
        """The value a job uses for `knob` and every setting it comes from, nearest first (depth
        first); empty when the job or the knob is unknown."""
        run = self.runs.get(run_id)
        setting = run.settings.get(knob) if run is not None else None
        return setting.chain() if setting is not None else ()


def _linear_chain(setting: Setting) -> Sequence[Setting]:
    """The setting and its single-parent ancestors (a value computed from several variables stops
    the chain: editing one of them would not set the value)."""
    out = [setting]
    current = setting
    while len(current.via) == 1:
        current = current.via[0]
        out.append(current)
    return out
