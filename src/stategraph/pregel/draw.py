"""A drawable view of a graph: nodes, edges, Mermaid and ASCII rendering."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from stategraph.constants import END, START

if TYPE_CHECKING:
    from stategraph.pregel.main import Pregel

__all__ = ["DrawableGraph", "Edge", "draw_pregel"]


@dataclass(frozen=True)
class Edge:
    """An arrow between two nodes; ``conditional`` edges are drawn dotted."""

    source: str
    target: str
    label: str | None = None
    conditional: bool = False


@dataclass
class DrawableGraph:
    """Nodes and edges of a graph, renderable as Mermaid or ASCII."""

    nodes: list[str] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)

    def draw_mermaid(self) -> str:
        """A Mermaid ``graph TD`` description of the graph."""
        lines = ["graph TD;"]
        for n in self.nodes:
            shape = f"{_mid(n)}([{n}])" if n in (START, END) else f"{_mid(n)}({n})"
            lines.append(f"\t{shape};")
        for e in self.edges:
            arrow = "-.->" if e.conditional else "-->"
            label = f"|{e.label}|" if e.label else ""
            lines.append(f"\t{_mid(e.source)} {arrow}{label} {_mid(e.target)};")
        return "\n".join(lines) + "\n"

    def draw_ascii(self) -> str:
        """A plain-text rendering: one line per edge, grouped by source."""
        out = []
        for n in self.nodes:
            outgoing = [e for e in self.edges if e.source == n]
            if not outgoing:
                out.append(f"[{n}]")
            for e in outgoing:
                arrow = "..>" if e.conditional else "-->"
                label = f" ({e.label})" if e.label else ""
                out.append(f"[{e.source}] {arrow} [{e.target}]{label}")
        return "\n".join(out) + "\n"

    def to_json(self) -> dict[str, Any]:
        """Nodes and edges as plain data."""
        return {
            "nodes": [{"id": n} for n in self.nodes],
            "edges": [
                {
                    "source": e.source,
                    "target": e.target,
                    "label": e.label,
                    "conditional": e.conditional,
                }
                for e in self.edges
            ],
        }


def _mid(name: str) -> str:
    return name.replace(" ", "_").replace("-", "_")


def draw_pregel(graph: Pregel, *, xray: int | bool = False) -> DrawableGraph:
    """Derive a drawing of a low-level graph from which nodes write which channels."""
    view = DrawableGraph(nodes=list(graph.nodes))
    for name, node in graph.nodes.items():
        for writer in node.writers:
            chan = getattr(writer, "channel", None)
            if chan is None:
                continue
            for target in graph.trigger_to_nodes.get(chan, ()):
                view.edges.append(Edge(name, target, label=chan))
    return view
