"""Drawing graphs: the :class:`Graph` object model and its renderers.

``compiled.get_graph()`` returns a :class:`Graph`. Render it as Mermaid source
(``draw_mermaid``), plain text (``draw_ascii``), SVG (``draw_svg``) or PNG
(``draw_png`` / ``draw_mermaid_png``, with the ``draw`` extra). Everything is
rendered locally: no web service, no browser, no Graphviz.
"""

from __future__ import annotations

from stategraph.drawing._graph import Edge, Graph, LabelsDict, Node
from stategraph.drawing._styles import CurveStyle, MermaidDrawMethod, NodeStyles

__all__ = [
    "Graph",
    "Node",
    "Edge",
    "LabelsDict",
    "CurveStyle",
    "NodeStyles",
    "MermaidDrawMethod",
]
