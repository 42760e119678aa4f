"""The settings graph's own directed graph: what a fix's exclusivity question walks."""
from __future__ import annotations

from trainlint.graph import DiGraph


def _graph(*edges):
    graph = DiGraph()
    for source, target in edges:
        graph.add_edge(source, target, kind="flow")
    return graph


def test_descendants_follow_every_path_and_leave_the_start_out_even_on_a_cycle():
    graph = _graph(("a", "b"), ("b", "c"), ("c", "a"), ("b", "d"), ("x", "a"))
    assert graph.descendants("a") == {"b", "c", "d"}
    assert graph.descendants("d") == set()
    assert graph.descendants("x") == {"a", "b", "c", "d"}


def test_nodes_keep_the_order_first_named_and_merge_their_attributes():
    graph = _graph(("job", "knob"))
    graph.add_node("job", run=1)
    graph.add_node("job", setting=2)
    graph.add_edge("knob", "run")
    assert list(graph.nodes) == ["job", "knob", "run"]
    assert graph.nodes["job"] == {"run": 1, "setting": 2}
    assert "run" in graph and "other" not in graph


def test_successors_and_out_degree_count_each_edge_once():
    graph = _graph(("a", "b"), ("a", "c"), ("a", "b"))
    assert list(graph.successors("a")) == ["b", "c"]
    assert graph.out_degree("a") == 2 and graph.out_degree("c") == 0
