"""The drawable graph object model: :class:`Graph`, :class:`Node`, :class:`Edge`.

The same shape as LangChain's ``langchain_core.runnables.graph`` (which LangGraph's
``get_graph()`` returns), so code that walks ``graph.nodes`` / ``graph.edges`` or calls
``first_node()``, ``extend()`` or ``to_json()`` ports unchanged. The renderers live in
their own modules and are imported only when a drawing is asked for.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from stategraph.drawing._elements import Edge, LabelsDict, Node, is_uuid
from stategraph.drawing._styles import CurveStyle, MermaidDrawMethod, NodeStyles

__all__ = ["Graph", "Node", "Edge", "LabelsDict"]

# Identifier LangGraph's graph JSON gives to a node that runs a function; kept so that
# tools reading that JSON (studio front ends, snapshot tests) see the same kinds.
RUNNABLE_KIND: tuple[str, ...] = ("langgraph", "_internal", "_runnable", "RunnableCallable")


def node_kind(data: Any) -> list[str]:
    """The ``data.id`` list of a node in :meth:`Graph.to_json`."""
    kind = getattr(data, "__drawing_kind__", None)
    if isinstance(kind, tuple):
        return list(kind)
    cls = data if isinstance(data, type) else type(data)
    return [*cls.__module__.split("."), cls.__name__]


def _data_name(data: Any) -> str:
    if data is None:
        return ""
    name = getattr(data, "name", None)
    if isinstance(name, str) and name:
        return name
    getter = getattr(data, "get_name", None)
    if callable(getter):
        got = getter()
        if isinstance(got, str):
            return got
    name = getattr(data, "__name__", None)
    if isinstance(name, str):
        return name
    return type(data).__name__


def _json_schema(schema: type[Any]) -> Any:
    from pydantic import TypeAdapter

    getter = getattr(schema, "model_json_schema", None)
    if callable(getter):
        return getter()
    return TypeAdapter(schema).json_schema()


@dataclass
class Graph:
    """Nodes and edges of a graph, with renderers: Mermaid, ASCII, SVG and PNG.

    ``nodes`` maps node ids to :class:`Node`; ``edges`` is a list of :class:`Edge`.
    ``get_graph()`` of a compiled graph returns one; you can also build one by hand
    with :meth:`add_node` and :meth:`add_edge`.
    """

    nodes: dict[str, Node] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.nodes)

    # ------------------------------------------------------------------ building
    def next_id(self) -> str:
        """A fresh unique node id (a UUID in hex)."""
        return uuid.uuid4().hex

    def add_node(
        self, data: Any, id: str | None = None, *, metadata: dict[str, Any] | None = None
    ) -> Node:
        """Add a node drawing ``data``; its id is ``id`` or a fresh UUID."""
        if id is not None and id in self.nodes:
            raise ValueError(f"Node with id '{id}' already exists; node ids must be unique.")
        node_id = id or self.next_id()
        node = Node(id=node_id, name=_data_name(data) or node_id, data=data, metadata=metadata)
        self.nodes[node_id] = node
        return node

    def remove_node(self, node: Node) -> None:
        """Remove ``node`` and every edge touching it."""
        self.nodes.pop(node.id, None)
        self.edges = [e for e in self.edges if node.id not in (e.source, e.target)]

    def add_edge(
        self, source: Node, target: Node, data: Any = None, conditional: bool = False
    ) -> Edge:
        """Add an edge between two nodes of this graph."""
        if source.id not in self.nodes:
            raise ValueError(f"Source node '{source.id}' is not in the graph; add it first.")
        if target.id not in self.nodes:
            raise ValueError(f"Target node '{target.id}' is not in the graph; add it first.")
        edge = Edge(source=source.id, target=target.id, data=data, conditional=conditional)
        self.edges.append(edge)
        return edge

    def extend(self, graph: Graph, *, prefix: str = "") -> tuple[Node | None, Node | None]:
        """Add the nodes and edges of ``graph``, ids prefixed with ``prefix:`` when given.

        Returns the first and last node of the added graph (see :meth:`first_node`).
        The two graphs are not connected: add edges for that.
        """

        def rename(node_id: str) -> str:
            return f"{prefix}:{node_id}" if prefix else node_id

        added = {rename(k): n.copy(id=rename(k)) for k, n in graph.nodes.items()}
        self.nodes.update(added)
        new_edges = [e.copy(source=rename(e.source), target=rename(e.target)) for e in graph.edges]
        self.edges.extend(new_edges)
        first = graph.first_node()
        last = graph.last_node()
        return (
            added[rename(first.id)] if first is not None else None,
            added[rename(last.id)] if last is not None else None,
        )

    def reid(self) -> Graph:
        """A copy whose generated (UUID) ids are replaced by readable names.

        A name used by one node becomes its id; names shared by several nodes get a
        suffix: ``name_1``, ``name_2``...
        """
        counts: dict[str, int] = {}
        for node in self.nodes.values():
            counts[node.name] = counts.get(node.name, 0) + 1
        seen: dict[str, int] = {}
        new_ids: dict[str, str] = {}
        for node_id, node in self.nodes.items():
            if not is_uuid(node_id):
                new_ids[node_id] = node_id
                continue
            if counts[node.name] == 1:
                new_ids[node_id] = node.name
            else:
                seen[node.name] = seen.get(node.name, 0) + 1
                new_ids[node_id] = f"{node.name}_{seen[node.name]}"
        return Graph(
            nodes={new_ids[k]: n.copy(id=new_ids[k]) for k, n in self.nodes.items()},
            edges=[
                e.copy(
                    source=new_ids.get(e.source, e.source), target=new_ids.get(e.target, e.target)
                )
                for e in self.edges
            ],
        )

    # ------------------------------------------------------------------ ends
    def _end(self, out: str, into: str, exclude: tuple[str, ...] = ()) -> Node | None:
        """The one node no edge's ``into`` end reaches, or None: the first node for
        ``("source", "target")``, the last for ``("target", "source")``. Nodes in
        ``exclude``, and the edges whose ``out`` end is one of them, are left out."""
        reached = {getattr(e, into) for e in self.edges if getattr(e, out) not in exclude}
        found = [n for k, n in self.nodes.items() if k not in exclude and k not in reached]
        return found[0] if len(found) == 1 else None

    def _trim(self, end: Node | None, out: str, into: str) -> None:
        """Remove ``end`` (the first or the last node, see :meth:`_end`) when one edge
        has its ``out`` end there and another node takes its role."""
        if (
            end is not None
            and sum(1 for e in self.edges if getattr(e, out) == end.id) == 1
            and self._end(out, into, exclude=(end.id,)) is not None
        ):
            self.remove_node(end)

    def first_node(self) -> Node | None:
        """The one node no edge points to (the origin of the drawing), or None."""
        return self._end("source", "target")

    def last_node(self) -> Node | None:
        """The one node no edge leaves (the sink of the drawing), or None."""
        return self._end("target", "source")

    def trim_first_node(self) -> None:
        """Remove the first node when it has one outgoing edge and another node takes its role."""
        self._trim(self.first_node(), "source", "target")

    def trim_last_node(self) -> None:
        """Remove the last node when it has one incoming edge and another node takes its role."""
        self._trim(self.last_node(), "target", "source")

    # ------------------------------------------------------------------ export
    def to_json(self, *, with_schemas: bool = False) -> dict[str, list[dict[str, Any]]]:
        """Nodes and edges as JSON-ready data (the shape LangGraph's graph JSON has)."""
        nodes: list[dict[str, Any]] = []
        for node in self.nodes.values():
            item: dict[str, Any] = {"id": node.id}
            data = node.data
            name = node.name if is_uuid(node.id) else node.id
            if isinstance(data, type):
                item["type"] = "schema"
                item["data"] = _json_schema(data) if with_schemas else data.__name__
            elif data is not None:
                item["type"] = "runnable"
                item["data"] = {"id": node_kind(data), "name": name}
            if node.metadata is not None:
                item["metadata"] = node.metadata
            nodes.append(item)
        edges: list[dict[str, Any]] = []
        for edge in self.edges:
            out: dict[str, Any] = {"source": edge.source, "target": edge.target}
            if edge.data is not None:
                out["data"] = edge.data
            if edge.conditional:
                out["conditional"] = True
            edges.append(out)
        return {"nodes": nodes, "edges": edges}

    # ------------------------------------------------------------------ renderers
    def draw_mermaid(
        self,
        *,
        with_styles: bool = True,
        curve_style: CurveStyle = CurveStyle.LINEAR,
        node_colors: NodeStyles | None = None,
        wrap_label_n_words: int = 9,
        frontmatter_config: Mapping[str, Any] | None = None,
    ) -> str:
        """Mermaid flowchart source for the graph.

        ``with_styles=False`` gives the bare structure (no node shapes, classes or front
        matter). ``curve_style`` sets how edges bend, ``node_colors`` the fill of ordinary,
        first and last nodes, ``wrap_label_n_words`` where long edge labels break, and
        ``frontmatter_config`` is merged into the YAML front matter (themes and such).
        """
        from stategraph.drawing._mermaid import render_mermaid

        return render_mermaid(
            self,
            with_styles=with_styles,
            curve_style=curve_style,
            node_styles=node_colors or NodeStyles(),
            wrap_label_n_words=wrap_label_n_words,
            frontmatter_config=frontmatter_config,
        )

    def draw_ascii(self) -> str:
        """Boxes and arrows in plain text (solid ``*`` edges, dotted ``.`` conditional ones)."""
        from stategraph.drawing._ascii import render_ascii

        return render_ascii(self)

    def print_ascii(self) -> None:
        """Print :meth:`draw_ascii`."""
        print(self.draw_ascii())

    def draw_svg(
        self,
        *,
        state: Any = None,
        node_colors: NodeStyles | None = None,
        output_file_path: str | None = None,
    ) -> str:
        """A self-contained SVG drawing (no scripts, no fonts or images to fetch).

        ``state`` may be a ``StateSnapshot`` (``graph.get_state(config)``): the nodes it
        will run next are highlighted and those waiting on an interrupt are marked.
        """
        from stategraph.drawing._highlight import highlight_from_state
        from stategraph.drawing._svg import render_svg

        svg = render_svg(
            self, highlight=highlight_from_state(state), node_styles=node_colors or NodeStyles()
        )
        if output_file_path is not None:
            with open(output_file_path, "w", encoding="utf-8") as f:
                f.write(svg)
        return svg

    def draw_png(
        self,
        output_file_path: str | None = None,
        fontname: str | None = None,
        labels: LabelsDict | None = None,
        *,
        state: Any = None,
    ) -> bytes:
        """A PNG drawing rendered locally (needs the ``draw`` extra: Pillow).

        ``labels`` renames nodes (``{"nodes": {id: text}}``) and edge labels
        (``{"edges": {label: text}}``); ``fontname`` is a TrueType font file or name.
        The bytes are returned and, with ``output_file_path``, also written there.
        """
        from stategraph.drawing._highlight import highlight_from_state
        from stategraph.drawing._png import render_png

        data = render_png(
            self,
            highlight=highlight_from_state(state),
            node_styles=NodeStyles(),
            fontname=fontname,
            labels=labels,
        )
        return _written(data, output_file_path)

    def draw_mermaid_png(
        self,
        *,
        curve_style: CurveStyle = CurveStyle.LINEAR,
        node_colors: NodeStyles | None = None,
        wrap_label_n_words: int = 9,
        output_file_path: str | None = None,
        draw_method: MermaidDrawMethod = MermaidDrawMethod.API,
        background_color: str = "white",
        padding: int = 10,
        max_retries: int = 1,
        retry_delay: float = 1.0,
        frontmatter_config: Mapping[str, Any] | None = None,
        base_url: str | None = None,
        proxies: Mapping[str, str] | None = None,
    ) -> bytes:
        """A PNG of the graph in Mermaid's colours, rendered locally (``draw`` extra).

        Unlike LangGraph, nothing is sent to a web service and no browser is started:
        the graph is laid out and painted here, whatever ``draw_method`` says. The
        network options (``base_url``, ``proxies``, retries) are accepted and unused.
        """
        from stategraph.drawing._png import render_png

        if wrap_label_n_words < 1:
            raise ValueError(f"wrap_label_n_words must be at least 1, got {wrap_label_n_words}.")
        data = render_png(
            self,
            highlight=None,
            node_styles=node_colors or NodeStyles(),
            background=background_color,
            padding=padding,
            wrap_label_n_words=wrap_label_n_words,
            curve_style=curve_style,
        )
        return _written(data, output_file_path)

    # ------------------------------------------------------------------ notebooks
    def _repr_mimebundle_(
        self, include: Any = None, exclude: Any = None, **kwargs: Any
    ) -> dict[str, str]:
        """Rich display for Jupyter and VS Code: inline SVG, Mermaid source and text."""
        from stategraph.drawing._notebook import mimebundle

        return mimebundle(self)


def _written(data: bytes, output_file_path: str | None) -> bytes:
    """``data`` (a PNG), first saved to ``output_file_path`` when one is given."""
    if output_file_path is not None:
        with open(output_file_path, "wb") as f:
            f.write(data)
    return data
