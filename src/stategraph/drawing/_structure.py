"""Which edges a graph has, found by walking its routes from the entry point.

A compiled graph knows, for each node, where its output can go (:class:`Route`: a
channel it writes, or ``END``) and which nodes each channel triggers. Walking those
routes super-step by super-step from ``START`` gives the edges of the drawing:

* a static edge is drawn solid, a route that depends on a decision (a conditional
  edge, ``Command(goto=...)`` destinations) dotted, with its label;
* a barrier (``add_edge([a, b], c)``) is drawn when all its sources have run;
* a node whose output goes nowhere gets an edge to ``END``;
* when no walk ever reaches ``END`` (the graph only loops), the node that would run
  at step :data:`STEP_LIMIT` gets a dotted edge to ``END`` (when it runs alone there),
  since something must stop the loop at run time.

Nodes the walk never reaches keep no edges. Edges come sorted by source and target,
then the edges to ``END`` of nodes that end the graph, then the loop exit.
This module works on plain data; ``stategraph.pregel`` describes a compiled graph.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from stategraph.constants import END, START
from stategraph.drawing._graph import Edge, Graph

__all__ = ["Route", "derive_edges", "embed_subgraph", "STEP_LIMIT"]

STEP_LIMIT = 250
"""How many super-steps the walk stands for when a graph loops forever."""


@dataclass(frozen=True)
class Route:
    """One place a node's output can go: a ``channel`` it writes, or ``END`` (None).

    ``value`` is the name written into a barrier channel (defaults to the node's name).
    """

    channel: str | None
    conditional: bool = False
    label: Any = None
    value: str | None = None


def derive_edges(
    *,
    routes: Mapping[str, Sequence[Route]],
    trigger_to_nodes: Mapping[str, Sequence[str]],
    barriers: Mapping[str, frozenset[str]] | None = None,
    start: str = START,
) -> list[Edge]:
    """The edges of a graph whose node ``start`` runs first (see the module docstring).

    ``routes[node]`` lists where ``node`` writes; ``trigger_to_nodes[channel]`` the
    nodes a write to ``channel`` triggers; ``barriers[channel]`` the names a barrier
    channel waits for before it triggers its nodes.
    """
    barriers = barriers or {}
    found: dict[tuple[str, str], tuple[bool, Any]] = {}
    ran: set[str] = set()
    waiting: dict[str, set[str]] = {}

    def record(source: str, target: str, conditional: bool, label: Any) -> None:
        known = found.get((source, target))
        if known is None:
            found[(source, target)] = (conditional, label)
        else:
            found[(source, target)] = (
                known[0] or conditional,
                known[1] if known[1] is not None else label,
            )

    # The walk is deterministic, so once a state repeats it cycles: stop there and
    # work out which tasks step ``STEP_LIMIT`` would run (the loop exit is drawn from
    # them, as LangGraph's drawing, which walks that many steps, does).
    history: list[frozenset[str]] = []
    index: dict[tuple[frozenset[str], frozenset[tuple[str, frozenset[str]]]], int] = {}
    tasks: frozenset[str] = frozenset({start})
    last: frozenset[str] = tasks
    while tasks:
        key = (tasks, frozenset((c, frozenset(v)) for c, v in waiting.items() if v))
        if key in index:
            first = index[key]
            period = len(history) - first
            last = history[first + (STEP_LIMIT - first) % period]
            break
        index[key] = len(history)
        history.append(tasks)
        last = tasks
        triggered: set[str] = set()
        for task in sorted(tasks):
            ran.add(task)
            for route in routes.get(task, ()):
                if route.channel is None:
                    record(task, END, route.conditional, route.label)
                elif route.channel in barriers:
                    waiting.setdefault(route.channel, set()).add(route.value or task)
                else:
                    for target in trigger_to_nodes.get(route.channel, ()):
                        record(task, target, route.conditional, route.label)
                        triggered.add(target)
        for channel, names in barriers.items():
            got = waiting.get(channel)
            if got and names <= got:
                for target in trigger_to_nodes.get(channel, ()):
                    for source in sorted(names):
                        record(source, target, False, None)
                    triggered.add(target)
                got.clear()
        tasks = frozenset(triggered)
        if len(history) > STEP_LIMIT:
            break

    edges = [Edge(s, t, label, cond) for (s, t), (cond, label) in sorted(found.items())]
    sources = {s for s, _ in found}
    ends = sorted(n for n in ran if n != start and n not in sources)
    edges.extend(Edge(n, END) for n in ends)
    if not any(e.target == END for e in edges) and len(last) == 1:
        edges.append(Edge(next(iter(last)), END, None, True))
    return edges


def embed_subgraph(graph: Graph, node_id: str, subgraph: Graph) -> None:
    """Replace node ``node_id`` of ``graph`` by the nodes and edges of ``subgraph``.

    The subgraph's ``START``/``END`` are dropped when another node can take their
    place; its ids get the prefix ``node_id:``. Edges into the node now go to the
    subgraph's first node, edges out of it leave from its last node.
    """
    subgraph.trim_first_node()
    subgraph.trim_last_node()
    first = subgraph.first_node()
    last = subgraph.last_node()
    entries = (
        [first.id]
        if first is not None
        else [k for k in subgraph.nodes if all(e.target != k for e in subgraph.edges)]
    )
    exits = (
        [last.id]
        if last is not None
        else [k for k in subgraph.nodes if all(e.source != k for e in subgraph.edges)]
    )
    graph.nodes.pop(node_id, None)
    rewired: list[Edge] = []
    for edge in graph.edges:
        sources = [f"{node_id}:{k}" for k in exits] if edge.source == node_id else [edge.source]
        targets = [f"{node_id}:{k}" for k in entries] if edge.target == node_id else [edge.target]
        rewired.extend(edge._replace(source=s, target=t) for s in sources for t in targets)
    graph.edges = rewired
    graph.extend(subgraph, prefix=node_id)
