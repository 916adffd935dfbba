"""Drawing a ``StateGraph``: static edges, barriers, conditional edges, Command targets."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stategraph.constants import END, START
from stategraph.pregel.draw import DrawableGraph, Edge

if TYPE_CHECKING:
    from stategraph.graph.state import StateGraph

__all__ = ["draw_state_graph"]


def draw_state_graph(builder: StateGraph[Any, Any, Any, Any]) -> DrawableGraph:
    """Nodes and edges of ``builder`` (START and END included)."""
    view = DrawableGraph(nodes=[START, *builder.nodes, END])
    for start, end in sorted(builder.edges):
        view.edges.append(Edge(start, end))
    for starts, end in sorted(builder.waiting_edges):
        for s in starts:
            view.edges.append(Edge(s, end))
    for source, branches in builder.branches.items():
        for branch in branches.values():
            if branch.path_map:
                for label, target in branch.path_map.items():
                    lab = None if label == target else str(label)
                    view.edges.append(Edge(source, target, label=lab, conditional=True))
            else:
                for target in branch.ends or [*builder.nodes, END]:
                    view.edges.append(Edge(source, target, conditional=True))
    for spec in builder.nodes.values():
        labels = spec.destination_labels or {}
        for target in spec.destinations or ():
            view.edges.append(Edge(spec.name, target, label=labels.get(target), conditional=True))
    return view
