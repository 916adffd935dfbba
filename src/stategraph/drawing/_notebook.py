"""Rich display in Jupyter and VS Code notebooks: inline SVG plus the Mermaid source."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from stategraph.drawing._elements import DrawnGraph


__all__ = ["mimebundle"]


def mimebundle(graph: DrawnGraph, *, state: Any = None, title: str | None = None) -> dict[str, str]:
    """The MIME bundle a notebook shows for ``graph``.

    ``text/html`` holds the SVG drawing and, folded below it, the Mermaid source (to
    paste into docs); ``image/svg+xml`` and ``text/vnd.mermaid`` serve front ends that
    prefer them; ``text/plain`` is the ASCII drawing. Everything is inline: it displays
    offline and survives in a saved notebook.
    """
    from stategraph.drawing._highlight import highlight_from_state
    from stategraph.drawing._svg import render_svg

    svg = render_svg(graph, highlight=highlight_from_state(state))
    mermaid = graph.draw_mermaid()
    heading = f"<div><strong>{html.escape(title)}</strong></div>" if title else ""
    page = (
        f'<div class="stategraph-graph">{heading}{svg}'
        "<details><summary>Mermaid source</summary>"
        f"<pre>{html.escape(mermaid)}</pre></details></div>"
    )
    return {
        "text/html": page,
        "image/svg+xml": svg,
        "text/vnd.mermaid": mermaid,
        "text/plain": graph.draw_ascii(),
    }
