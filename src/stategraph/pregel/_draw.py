"""``get_graph()``: describe a compiled graph's routes and hand them to the drawing layer."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from stategraph.channels.named_barrier_value import NamedBarrierValue, NamedBarrierValueAfterFinish
from stategraph.constants import END, START
from stategraph.drawing._graph import Graph, Node
from stategraph.drawing._structure import Route, derive_edges, embed_subgraph
from stategraph.pregel._pregel.marker import GraphMarker
from stategraph.pregel.node import ChannelWrite, PregelNode

if TYPE_CHECKING:
    from stategraph.pregel._roles import PregelGraph

__all__ = ["draw_pregel", "node_routes"]

# Metadata keys the runtime keeps on nodes for itself; not shown in drawings.
_INTERNAL_METADATA = frozenset({"__hidden__"})


def node_routes(node: PregelNode) -> list[Route]:
    """Where ``node``'s output can go, as declared by its writers.

    A writer describes itself with a ``static_routes()`` method; a plain
    :class:`ChannelWrite` always writes its channel.
    """
    routes: list[Route] = []
    for writer in node.writers:
        describe = getattr(writer, "static_routes", None)
        if callable(describe):
            routes.extend(describe())
        elif isinstance(writer, ChannelWrite):
            routes.append(Route(writer.channel))
    return routes


def _interrupt_tag(graph: PregelGraph, name: str) -> str | None:
    tags = []
    for tag, names in (
        ("before", graph.interrupt_before_nodes),
        ("after", graph.interrupt_after_nodes),
    ):
        if names != "*" and name in names:
            tags.append(tag)
    return ",".join(tags) or None


def _metadata(graph: PregelGraph, name: str, node: PregelNode) -> dict[str, Any] | None:
    meta = {k: v for k, v in node.metadata.items() if k not in _INTERNAL_METADATA}
    if node.defer:
        meta["defer"] = True
    tag = _interrupt_tag(graph, name)
    if tag:
        meta["__interrupt"] = tag
    return meta or None


def _subgraph_of(node: PregelNode) -> PregelGraph | None:
    if isinstance(node.proc, GraphMarker):
        return cast("PregelGraph", node.proc)
    if len(node.subgraphs) == 1 and isinstance(node.subgraphs[0], GraphMarker):
        return cast("PregelGraph", node.subgraphs[0])
    return None


def draw_pregel(
    graph: PregelGraph,
    *,
    xray: int | bool = False,
    _within: tuple[int, ...] = (),
) -> Graph:
    """The drawable :class:`~stategraph.drawing.Graph` of a compiled graph.

    ``xray=True`` draws every subgraph inside its node; an int draws that many levels.
    A graph that a node refers to while being one of its ancestors (a node calling its
    own graph) is not opened again.
    """
    routes = {name: node_routes(node) for name, node in graph.nodes.items()}
    if START not in graph.nodes:
        inputs = graph.input_channels
        routes[START] = [Route(c) for c in ([inputs] if isinstance(inputs, str) else inputs)]
    barriers = {
        key: frozenset(ch.names)
        for key, ch in graph.channels.items()
        if isinstance(ch, (NamedBarrierValue, NamedBarrierValueAfterFinish))
    }
    edges = derive_edges(routes=routes, trigger_to_nodes=graph.trigger_to_nodes, barriers=barriers)

    drawing = Graph()
    for name, node in graph.nodes.items():
        sub = _subgraph_of(node)
        data: Any = node.proc if sub is node.proc else node
        drawing.nodes[name] = Node(name, name, data, _metadata(graph, name, node))
    if START not in drawing.nodes:
        drawing.nodes[START] = Node(START, START, None, None)
    drawing.nodes[END] = Node(END, END, None, None)
    drawing.edges = edges

    if xray:
        deeper: int | bool = xray - 1 if not isinstance(xray, bool) else True
        within = (*_within, id(graph))
        for name, node in graph.nodes.items():
            sub = _subgraph_of(node)
            if sub is None or name == START or id(sub) in within:
                continue
            embed_subgraph(drawing, name, draw_pregel(sub, xray=deeper, _within=within))
    return drawing
