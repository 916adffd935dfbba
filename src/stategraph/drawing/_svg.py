"""Self-contained SVG drawing of a :class:`~stategraph.drawing._graph.Graph`.

No scripts, no external fonts, images or stylesheets: the file displays offline in a
browser, a notebook or an editor preview. Node sizes come from estimated text widths.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from xml.sax.saxutils import escape, quoteattr

from stategraph.drawing._highlight import Highlight
from stategraph.drawing._layout import Layout, layout_graph
from stategraph.drawing._styles import NodeStyles
from stategraph.drawing._theme import PALETTE, node_lines, node_role, role_style, text_width

if TYPE_CHECKING:
    from stategraph.drawing._elements import DrawnGraph, Node

__all__ = ["render_svg", "SvgMetrics", "smooth_path"]

FONT = "'trebuchet ms', verdana, arial, sans-serif"


class SvgMetrics:
    """Sizes used by the SVG drawing (pixels)."""

    title = 14.0
    small = 11.0
    label = 12.0
    pad_x = 16.0
    pad_y = 10.0
    line = 1.3


def node_size(node: Node) -> tuple[float, float]:
    """Width and height of a node's box in the SVG drawing."""
    m = SvgMetrics
    title, extra = node_lines(node)
    width = text_width(title, m.title)
    for line in extra:
        width = max(width, text_width(line, m.small))
    height = m.title * m.line + 2 * m.pad_y
    if extra:
        height += 6 + len(extra) * m.small * m.line
    return max(width + 2 * m.pad_x, 40.0), height


def smooth_path(points: list[tuple[float, float]], radius: float = 10.0) -> str:
    """An SVG path through ``points`` with rounded corners."""
    (x0, y0) = points[0]
    d = [f"M{x0:.1f},{y0:.1f}"]
    for i in range(1, len(points) - 1):
        px, py = points[i - 1]
        cx, cy = points[i]
        nx, ny = points[i + 1]
        d1 = max(((cx - px) ** 2 + (cy - py) ** 2) ** 0.5, 1e-9)
        d2 = max(((nx - cx) ** 2 + (ny - cy) ** 2) ** 0.5, 1e-9)
        r = min(radius, d1 / 2, d2 / 2)
        ax, ay = cx - (cx - px) / d1 * r, cy - (cy - py) / d1 * r
        bx, by = cx + (nx - cx) / d2 * r, cy + (ny - cy) / d2 * r
        d.append(f"L{ax:.1f},{ay:.1f} Q{cx:.1f},{cy:.1f} {bx:.1f},{by:.1f}")
    xn, yn = points[-1]
    d.append(f"L{xn:.1f},{yn:.1f}")
    return " ".join(d)


def _style_attr(css: dict[str, str]) -> str:
    keep = {k: v for k, v in css.items() if k != "line-height"}
    return ";".join(f"{k}:{v}" for k, v in keep.items())


def _badge(node_id: str, highlight: Highlight | None) -> str:
    """The badge a highlighted node carries inside its box ("" for none)."""
    if highlight is None:
        return ""
    if node_id in highlight.interrupts:
        return "interrupt"
    return "next" if node_id in highlight.next else ""


def _layout(graph: DrawnGraph, highlight: Highlight | None) -> Layout:
    def size(node: Node) -> tuple[float, float]:
        w, h = node_size(node)
        badge = _badge(node.id, highlight)
        return (w + text_width(badge, 10) + 16, h) if badge else (w, h)

    return layout_graph(
        graph,
        size=size,
        h_gap=28.0,
        v_gap=52.0,
        cluster_pad=14.0,
        cluster_head=18.0,
        dummy_width=12.0,
        margin=12.0,
        label_size=lambda e: (text_width(str(e.data), SvgMetrics.label) + 12, 18.0),
        title_width=lambda path: 8 + text_width(path.split(":")[-1], SvgMetrics.label),
    )


def render_svg(
    graph: DrawnGraph,
    *,
    highlight: Highlight | None = None,
    node_styles: NodeStyles | None = None,
) -> str:
    """The SVG document of ``graph`` (``highlight`` marks next nodes and interrupts)."""
    styles = node_styles or NodeStyles()
    m = SvgMetrics
    p = PALETTE
    layout = _layout(graph, highlight)
    legend = 0.0
    hl = highlight or Highlight()
    legend_texts = [f"{k}: {v}" for k, vs in hl.interrupts.items() for v in vs]
    if highlight:
        legend = 30.0 + 16.0 * len(legend_texts)
    legend_w = max([290.0] + [text_width(t, m.label) + 24 for t in legend_texts])
    width = max(layout.width, legend_w if highlight else 0.0)
    height = layout.height + legend
    out: list[str] = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.1f} {height:.1f}" font-family="{FONT}" role="img">',
        f"<title>{escape(_title(graph))}</title>",
        "<defs>",
        *(
            f'<marker id="sg-arrow-{name}" viewBox="0 0 10 10" refX="9" refY="5" '
            f'markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
            f'<path d="M0,0 L10,5 L0,10 z" fill="{color}"/></marker>'
            for name, color in (("edge", p.edge), ("next", p.next_stroke))
        ),
        "</defs>",
        f'<rect x="0" y="0" width="{width:.1f}" height="{height:.1f}" fill="{p.background}"/>',
    ]
    for cluster in sorted(layout.clusters, key=lambda c: c.depth):
        marked = cluster.path in hl.next
        stroke = p.next_stroke if marked else p.cluster_stroke
        out.append(
            f'<g class="cluster" data-id={quoteattr(cluster.path)}>'
            f'<rect x="{cluster.x:.1f}" y="{cluster.y:.1f}" width="{cluster.w:.1f}" '
            f'height="{cluster.h:.1f}" rx="4" fill="{p.cluster_fill}" stroke="{stroke}" '
            f'stroke-width="{2.5 if marked else 1}"/>'
            f'<text x="{cluster.x + 8:.1f}" y="{cluster.y + 14:.1f}" font-size="{m.label}" '
            f'fill="{p.text}">{escape(cluster.path.split(":")[-1])}</text></g>'
        )
    for route in layout.routes:
        edge = route.edge
        dash = ' stroke-dasharray="4,3"' if edge.conditional else ""
        out.append(
            f'<path class="edge" d="{smooth_path(route.points)}" fill="none" '
            f'stroke="{p.edge}" stroke-width="1.3"{dash} marker-end="url(#sg-arrow-edge)" '
            f"data-source={quoteattr(edge.source)} data-target={quoteattr(edge.target)}/>"
        )
    for route in layout.routes:
        if route.edge.data is None or route.label_at is None:
            continue
        text = str(route.edge.data)
        if not text:
            continue
        w = text_width(text, m.label) + 8
        lx, ly = route.label_at
        if route.self_loop:
            lx += w / 2 + 4
        out.append(
            f'<g class="edge-label"><rect x="{lx - w / 2:.1f}" y="{ly - 9:.1f}" '
            f'width="{w:.1f}" height="18" rx="3" fill="{p.label_bg}"/>'
            f'<text x="{lx:.1f}" y="{ly + 4:.1f}" font-size="{m.label}" text-anchor="middle" '
            f'fill="{p.text}">{escape(text)}</text></g>'
        )
    first, last = graph.first_node(), graph.last_node()
    for node_id, box in layout.boxes.items():
        node = box.node
        css = role_style(styles, node_role(node, first, last))
        fill_style = _style_attr(css)
        stroke, stroke_width, badge = p.stroke, 1.0, ""
        waiting = hl.interrupts.get(node_id)
        if waiting:
            stroke, stroke_width, badge = p.interrupt_stroke, 3.0, "interrupt"
        elif node_id in hl.next:
            stroke, stroke_width, badge = p.next_stroke, 3.0, "next"
        shape_round = box.h / 2 if node.name.split(":")[-1] in ("__start__", "__end__") else 5
        title, extra = node_lines(node)
        tooltip = node.id if not waiting else node.id + "\n" + "\n".join(waiting)
        out.append(
            f'<g class="node" data-id={quoteattr(node_id)}><title>{escape(tooltip)}</title>'
            f'<rect x="{box.x:.1f}" y="{box.y:.1f}" width="{box.w:.1f}" height="{box.h:.1f}" '
            f'rx="{shape_round:.1f}" fill="#f2f0ff" stroke="{stroke}" '
            f'stroke-width="{stroke_width}" style="{fill_style}"/>'
        )
        ty = box.y + m.pad_y + m.title
        badge_w = text_width(badge, 10) + 12 if badge else 0.0
        cx = box.cx - badge_w / 2
        out.append(
            f'<text x="{cx:.1f}" y="{ty:.1f}" font-size="{m.title}" text-anchor="middle" '
            f'fill="{p.text}">{escape(title)}</text>'
        )
        if extra:
            hr = ty + 6
            out.append(
                f'<line x1="{box.x + 6:.1f}" y1="{hr:.1f}" x2="{box.x + box.w - 6:.1f}" '
                f'y2="{hr:.1f}" stroke="{p.stroke}" stroke-width="0.8"/>'
            )
            for i, line in enumerate(extra):
                y = hr + (i + 1) * m.small * m.line
                out.append(
                    f'<text x="{box.cx:.1f}" y="{y:.1f}" font-size="{m.small}" '
                    f'font-style="italic" text-anchor="middle" fill="{p.text}">{escape(line)}</text>'
                )
        if badge:
            color = p.interrupt_stroke if waiting else p.next_stroke
            bx = box.x + box.w - badge_w - 6
            by = box.y + m.pad_y + m.title / 2 - 8
            out.append(
                f'<rect class="badge" x="{bx:.1f}" y="{by:.1f}" width="{badge_w:.1f}" '
                f'height="16" rx="8" fill="{color}"/><text x="{bx + badge_w / 2:.1f}" '
                f'y="{by + 11.5:.1f}" font-size="10" text-anchor="middle" fill="white">'
                f"{badge}</text>"
            )
        out.append("</g>")
    if highlight:
        y = layout.height + 10
        out.append(
            f'<g class="legend" font-size="{m.label}" fill="{p.text}">'
            f'<rect x="12" y="{y:.1f}" width="12" height="12" fill="none" '
            f'stroke="{p.next_stroke}" stroke-width="3"/>'
            f'<text x="30" y="{y + 11:.1f}">runs next</text>'
            f'<rect x="110" y="{y:.1f}" width="12" height="12" fill="none" '
            f'stroke="{p.interrupt_stroke}" stroke-width="3"/>'
            f'<text x="128" y="{y + 11:.1f}">waits on an interrupt</text>'
        )
        line_y = y + 28
        for node_id, values in highlight.interrupts.items():
            for value in values:
                out.append(
                    f'<text x="12" y="{line_y:.1f}">{escape(node_id)}: {escape(value)}</text>'
                )
                line_y += 16
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _title(graph: DrawnGraph) -> str:
    names = [n.name for n in graph.nodes.values() if n.name not in ("__start__", "__end__")]
    return "Graph: " + ", ".join(names[:12]) + (" …" if len(names) > 12 else "")
