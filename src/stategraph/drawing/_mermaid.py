"""Mermaid flowchart source for a :class:`~stategraph.drawing._graph.Graph`.

The output matches LangGraph's (front matter, node shapes, ``classDef`` styles, one
``subgraph`` block per expanded subgraph), with two safety fixes: node ids are always
escaped so that any name gives a valid id, and a node name holding characters that
Mermaid reads as syntax is quoted.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from stategraph.drawing._styles import CurveStyle, NodeStyles
from stategraph.drawing._yaml import dump_yaml

if TYPE_CHECKING:
    from stategraph.drawing._elements import DrawnGraph, Edge, Node

__all__ = ["render_mermaid", "escape_id", "node_label", "edge_label", "parent_path"]

_UNSAFE_ID = re.compile(r"[^a-zA-Z0-9_-]")
# characters Mermaid parses as shape or link syntax inside a node's text
_NEEDS_QUOTES = re.compile(r"[()\[\]{}<>|\"#;]")


def escape_id(node_id: str) -> str:
    """A Mermaid-safe id: every character but ASCII letters, digits, ``_`` and ``-``
    becomes ``\\`` plus its code point in hex (``my node`` -> ``my\\20node``)."""
    return _UNSAFE_ID.sub(lambda m: f"\\{ord(m.group(0)):x}", node_id)


def parent_path(node_id: str) -> str:
    """The subgraph a node id lives in (``outer:inner:node`` -> ``outer:inner``)."""
    return node_id.rsplit(":", 1)[0] if ":" in node_id else ""


def _metadata_lines(metadata: Mapping[str, Any] | None) -> list[str]:
    lines = []
    for key, value in (metadata or {}).items():
        if isinstance(value, (str, int, float, bool)):
            lines.append(f"{key} = {value}")
        elif isinstance(value, (list, tuple)) and all(
            isinstance(v, (str, int, float, bool)) for v in value
        ):
            lines.append(f"{key} = {', '.join(str(v) for v in value)}")
    return lines


def node_label(node: Node) -> str:
    """The text shown in a node: its name (last part of a prefixed name), metadata below."""
    name = node.name.split(":")[-1]
    label = f"<p>{name}</p>" if name.startswith("__") and name.endswith("__") else name
    lines = _metadata_lines(node.metadata)
    if lines:
        label += "<hr/><small><em>" + "\n".join(lines) + "</em></small>"
    if _NEEDS_QUOTES.search(name):
        label = '"' + label.replace('"', "#quot;") + '"'
    return label


def edge_label(data: Any, wrap_label_n_words: int) -> str:
    """An edge label, broken into lines of ``wrap_label_n_words`` words."""
    text = str(data)
    words = text.split()
    if len(words) > wrap_label_n_words:
        text = "&nbsp<br>&nbsp".join(
            " ".join(words[i : i + wrap_label_n_words])
            for i in range(0, len(words), wrap_label_n_words)
        )
    return text


def _edge_line(edge: Edge, wrap_label_n_words: int) -> str:
    src, dst = escape_id(edge.source), escape_id(edge.target)
    if edge.data is None:
        arrow = "-.->" if edge.conditional else "-->"
        return f"\t{src} {arrow} {dst};"
    label = edge_label(edge.data, wrap_label_n_words)
    if edge.conditional:
        return f"\t{src} -. &nbsp;{label}&nbsp; .-> {dst};"
    return f"\t{src} -- &nbsp;{label}&nbsp; --> {dst};"


def _common_path(a: str, b: str) -> str:
    pa, pb = parent_path(a).split(":"), parent_path(b).split(":")
    common: list[str] = []
    for x, y in zip(pa, pb, strict=False):
        if x != y or not x:
            break
        common.append(x)
    return ":".join(common)


def render_mermaid(
    graph: DrawnGraph,
    *,
    with_styles: bool = True,
    curve_style: CurveStyle = CurveStyle.LINEAR,
    node_styles: NodeStyles | None = None,
    wrap_label_n_words: int = 9,
    frontmatter_config: Mapping[str, Any] | None = None,
) -> str:
    """Mermaid source for ``graph`` (see :meth:`Graph.draw_mermaid` for the options)."""
    if wrap_label_n_words < 1:
        raise ValueError(f"wrap_label_n_words must be at least 1, got {wrap_label_n_words}.")
    styles = node_styles or NodeStyles()
    lines: list[str] = []
    if with_styles:
        front = copy.deepcopy(dict(frontmatter_config or {}))
        config = front.setdefault("config", {})
        if not isinstance(config, dict):
            raise ValueError("frontmatter_config['config'] must be a mapping.")
        flowchart = config.setdefault("flowchart", {})
        if not isinstance(flowchart, dict):
            raise ValueError("frontmatter_config['config']['flowchart'] must be a mapping.")
        flowchart["curve"] = CurveStyle(curve_style).value
        lines += ["---", *dump_yaml(front), "---"]
    lines.append("graph TD;")

    first = graph.first_node()
    last = graph.last_node()

    # Which subgraph each edge is drawn in, and the tree of subgraph paths.
    groups: dict[str, list[Edge]] = {"": []}
    for edge in graph.edges:
        groups.setdefault(_common_path(edge.source, edge.target), []).append(edge)
    paths = [p for p in groups if p]
    for node_id in graph.nodes:
        path = parent_path(node_id)
        if path and path not in paths:
            paths.append(path)
    # every ancestor of a path is a path too
    for path in list(paths):
        parts = path.split(":")
        for i in range(1, len(parts)):
            ancestor = ":".join(parts[:i])
            if ancestor not in paths:
                paths.append(ancestor)
    children: dict[str, list[str]] = {}
    for path in paths:
        children.setdefault(parent_path(path), []).append(path)

    def has_edges(path: str) -> bool:
        return bool(groups.get(path)) or any(has_edges(c) for c in children.get(path, ()))

    def node_def(node: Node) -> str:
        eid = escape_id(node.id)
        label = node_label(node)
        if first is not None and node.id == first.id:
            return f"\t{eid}([{label}]):::first"
        if last is not None and node.id == last.id:
            return f"\t{eid}([{label}]):::last"
        return f"\t{eid}({label})"

    seen_names: dict[str, str] = {}

    def emit(path: str) -> None:
        if path:
            name = path.split(":")[-1]
            if name in seen_names:
                raise ValueError(
                    f"Two subgraphs are both named '{name}' ('{seen_names[name]}' and "
                    f"'{path}'); Mermaid needs unique subgraph names. Rename one of the "
                    "subgraph nodes."
                )
            seen_names[name] = path
            lines.append(f"\tsubgraph {name}")
        if with_styles:
            lines.extend(node_def(n) for k, n in graph.nodes.items() if parent_path(k) == path)
        loops = []
        for edge in groups.get(path, ()):
            if edge.source == edge.target:
                loops.append(edge)
            else:
                lines.append(_edge_line(edge, wrap_label_n_words))
        for child in children.get(path, ()):
            if with_styles or has_edges(child):
                emit(child)
        lines.extend(_edge_line(e, wrap_label_n_words) for e in loops)
        if path:
            lines.append("\tend")

    emit("")
    if with_styles:
        lines += [
            f"\tclassDef default {styles.default}",
            f"\tclassDef first {styles.first}",
            f"\tclassDef last {styles.last}",
        ]
    return "\n".join(lines) + "\n"
