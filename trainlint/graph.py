"""The settings graph: values at their origins, "flows into" edges, and the runs they reach.

It answers the questions that need more than one run at a time: which origin a fix may edit
without changing anything else, and which runs depend on a file.
"""
from __future__ import annotations

from typing import Dict, Iterable, List, Optional, Tuple

import networkx as nx

from trainlint.core import Origin, Setting, TrainingRun
from trainlint.readers.facts import Flow

NodeKey = Tuple[str, int, int]  # (path, start_byte, end_byte)


def node_key(origin: Origin) -> NodeKey:
    return (origin.path, origin.start_byte, origin.end_byte)


def knob_node(run_id: str, knob: str) -> Tuple[str, str, str]:
    return ("knob", run_id, knob)


class SettingsGraph:
    def __init__(self) -> None:
        self.graph = nx.DiGraph()
        self.runs: Dict[str, TrainingRun] = {}
        # Flow targets by file: an expansion (`$X`) may sit inside a larger word (`"$X"`, `--f=$X`)
        # whose setting is what a run reads; the expansion then flows into that word.
        self._targets: Dict[str, List[NodeKey]] = {}

    # ------------------------------------------------------------ building
    def add_flows(self, flows: Iterable[Flow]) -> None:
        for flow in flows:
            target = node_key(flow.target)
            self.graph.add_edge(node_key(flow.source), target, kind="flow")
            self._targets.setdefault(flow.target.path, []).append(target)

    def _add_chain(self, setting: Setting, sink) -> None:
        if setting.origin is None:
            for upstream in setting.via:
                self._add_chain(upstream, sink)
            return
        here = node_key(setting.origin)
        self.graph.add_node(here, setting=setting)
        self.graph.add_edge(here, sink, kind="flows-into")
        for inner in self._targets.get(setting.origin.path, ()):
            if inner != here and here[1] <= inner[1] and inner[2] <= here[2]:
                self.graph.add_edge(inner, here, kind="part-of")
        for upstream in setting.via:
            self._add_chain(upstream, here)

    def add_run(self, run: TrainingRun) -> None:
        self.runs[run.id] = run
        self.graph.add_node(("run", run.id), run=run)
        for name, pinned in run.pins.items():
            sink = knob_node(run.id, name)
            self.graph.add_edge(sink, ("run", run.id), kind="knob")
            for setting in pinned:
                self._add_chain(setting, sink)
        for path in run.files:
            self.graph.add_edge(("file", path), ("run", run.id), kind="reads")

    # ------------------------------------------------------------ queries
    def uses(self, origin: Origin) -> List:
        """Everything the value at `origin` flows into directly."""
        key = node_key(origin)
        return list(self.graph.successors(key)) if key in self.graph else []

    def is_exclusive(self, origin: Origin, run_id: str, knob: str, together: Iterable[str] = ()) -> bool:
        """True when the value written at `origin` reaches nothing but this run's knob (and the
        knobs in `together`, which the same fix changes consistently)."""
        key = node_key(origin)
        if key not in self.graph:
            return True
        allowed = {knob_node(run_id, name) for name in (knob, *together)}
        for reached in nx.descendants(self.graph, key):
            if isinstance(reached, tuple) and reached and reached[0] == "knob" and reached not in allowed:
                return False
            if reached not in allowed and reached != ("run", run_id) and self.graph.out_degree(reached) == 0:
                return False  # an expansion used by something that is not a knob (e.g. `--lr $((B*2))`)
        return True

    def fix_target(self, run_id: str, knob: str, setting: Setting, together: Iterable[str] = ()) -> Optional[Setting]:
        """The place to edit so that only this run's knob (and `together`) changes: the head of the
        provenance chain if it is exclusive, else the nearest exclusive place on the chain."""
        together = tuple(together)
        chain = [s for s in _linear_chain(setting) if s.origin is not None]
        for candidate in reversed(chain):
            if self.is_exclusive(candidate.origin, run_id, knob, together):
                return candidate
        return None

    def runs_touching(self, path: str) -> List[str]:
        key = ("file", path)
        if key not in self.graph:
            return []
        return sorted(n[1] for n in self.graph.successors(key) if n[0] == "run")


def _linear_chain(setting: Setting) -> List[Setting]:
    """The setting and its single-parent ancestors (a value computed from several variables stops
    the chain: editing one of them would not set the value)."""
    out = [setting]
    current = setting
    while len(current.via) == 1:
        current = current.via[0]
        out.append(current)
    return out
