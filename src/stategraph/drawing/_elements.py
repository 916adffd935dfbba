"""The parts of a drawing: :class:`Node`, :class:`Edge`, and what a renderer reads.

The renderers (Mermaid, ASCII, SVG, PNG, layout, notebook display) read a graph
through :class:`DrawnGraph`, the few members they use, so they do not import
:class:`~stategraph.drawing.Graph`, whose methods import them when a drawing is asked for.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple, Protocol

__all__ = ["DrawnGraph", "Edge", "LabelsDict", "Node", "is_uuid"]

LabelsDict = dict[str, dict[str, str]]
"""Display names for ``draw_png(labels=...)``: ``{"nodes": {id: label}, "edges": {data: label}}``."""

_UUID = re.compile(r"^[0-9a-f]{32}$|^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def is_uuid(value: str) -> bool:
    """True when ``value`` is a UUID (hex or dashed): an id made up by :meth:`Graph.next_id`."""
    return bool(_UUID.match(value))


class Node(NamedTuple):
    """A node: unique ``id``, display ``name``, the object it draws (``data``) and metadata."""

    id: str
    name: str
    data: Any
    metadata: dict[str, Any] | None

    def copy(self, *, id: str | None = None, name: str | None = None) -> Node:
        """A copy with a new ``id`` and/or ``name``."""
        return self._replace(
            id=self.id if id is None else id, name=self.name if name is None else name
        )


class Edge(NamedTuple):
    """An arrow from ``source`` to ``target`` (node ids); ``data`` is its label.

    ``conditional`` edges are taken only when a routing decision says so (drawn dotted).
    """

    source: str
    target: str
    data: Any = None
    conditional: bool = False

    def copy(self, *, source: str | None = None, target: str | None = None) -> Edge:
        """A copy with a new ``source`` and/or ``target``."""
        return self._replace(
            source=self.source if source is None else source,
            target=self.target if target is None else target,
        )


class DrawnGraph(Protocol):
    """What a renderer reads of a :class:`~stategraph.drawing.Graph`."""

    nodes: dict[str, Node]
    edges: list[Edge]

    def first_node(self) -> Node | None:
        """The one node no edge enters, if there is exactly one."""
        ...

    def last_node(self) -> Node | None:
        """The one node no edge leaves, if there is exactly one."""
        ...

    def draw_mermaid(self) -> str:
        """The Mermaid source of the graph."""
        ...

    def draw_ascii(self) -> str:
        """The graph drawn in text."""
        ...
