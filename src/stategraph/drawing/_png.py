"""PNG drawing painted locally with Pillow (the ``draw`` extra).

The same layered layout as the SVG drawing, measured with a real font and painted at
twice the size for sharp text. Nothing leaves the machine: no web service, no browser.
"""

from __future__ import annotations

import io
import itertools
import math
from typing import TYPE_CHECKING, Any

from stategraph._optional import requires_extra
from stategraph.drawing._highlight import Highlight
from stategraph.drawing._layout import layout_graph
from stategraph.drawing._styles import CurveStyle, NodeStyles
from stategraph.drawing._theme import PALETTE, node_lines, node_role, role_style

if TYPE_CHECKING:
    from stategraph.drawing._elements import DrawnGraph, LabelsDict, Node

__all__ = ["render_png"]

SCALE = 2


def _pillow() -> Any:
    with requires_extra(
        "PNG drawings need Pillow: install the 'draw' extra "
        "(pip install 'stategraph[draw]'), or use draw_svg() / draw_mermaid()."
    ):
        from PIL import Image, ImageColor, ImageDraw, ImageFont
    return Image, ImageColor, ImageDraw, ImageFont


def _font(fontname: str | None, size: int, *, italic: bool = False) -> Any:
    _, _, _, image_font = _pillow()
    if fontname:
        try:
            return image_font.truetype(fontname, size)
        except OSError as exc:
            raise ValueError(
                f"Cannot load font '{fontname}': give the path of a TrueType font file or "
                "the name of an installed one."
            ) from exc
    for name in (("DejaVuSans-Oblique.ttf",) if italic else ()) + ("DejaVuSans.ttf",):
        try:
            return image_font.truetype(name, size)
        except OSError:
            continue
    return image_font.load_default(size=size)


def _rgba(color: str, opacity: float = 1.0) -> tuple[int, int, int, int]:
    if color == "transparent":
        return (0, 0, 0, 0)
    _, image_color, _, _ = _pillow()
    rgb = image_color.getrgb(color)
    alpha = rgb[3] if len(rgb) == 4 else 255
    return (rgb[0], rgb[1], rgb[2], round(alpha * opacity))


def _wrap(text: str, words: int) -> list[str]:
    parts = text.split()
    if len(parts) <= words:
        return [text]
    return [" ".join(parts[i : i + words]) for i in range(0, len(parts), words)]


def _dashed(
    draw: Any, a: tuple[float, float], b: tuple[float, float], fill: Any, width: int
) -> None:
    length = math.dist(a, b)
    if length == 0:
        return
    dash, gap = 5 * SCALE, 4 * SCALE
    t = 0.0
    while t < length:
        t2 = min(t + dash, length)
        p = (a[0] + (b[0] - a[0]) * t / length, a[1] + (b[1] - a[1]) * t / length)
        q = (a[0] + (b[0] - a[0]) * t2 / length, a[1] + (b[1] - a[1]) * t2 / length)
        draw.line([p, q], fill=fill, width=width)
        t = t2 + gap


def _rounded(points: list[tuple[float, float]], radius: float) -> list[tuple[float, float]]:
    """``points`` with each corner replaced by a sampled quadratic curve."""
    out = [points[0]]
    for i in range(1, len(points) - 1):
        (px, py), (cx, cy), (nx, ny) = points[i - 1], points[i], points[i + 1]
        d1 = max(math.dist((px, py), (cx, cy)), 1e-9)
        d2 = max(math.dist((cx, cy), (nx, ny)), 1e-9)
        r = min(radius, d1 / 2, d2 / 2)
        a = (cx - (cx - px) / d1 * r, cy - (cy - py) / d1 * r)
        b = (cx + (nx - cx) / d2 * r, cy + (ny - cy) / d2 * r)
        for k in range(9):
            t = k / 8
            out.append(
                (
                    (1 - t) ** 2 * a[0] + 2 * (1 - t) * t * cx + t**2 * b[0],
                    (1 - t) ** 2 * a[1] + 2 * (1 - t) * t * cy + t**2 * b[1],
                )
            )
    out.append(points[-1])
    return out


def render_png(
    graph: DrawnGraph,
    *,
    highlight: Highlight | None = None,
    node_styles: NodeStyles | None = None,
    fontname: str | None = None,
    labels: LabelsDict | None = None,
    background: str = "white",
    padding: int = 10,
    wrap_label_n_words: int = 9,
    curve_style: CurveStyle = CurveStyle.LINEAR,
) -> bytes:
    """PNG bytes of ``graph``; ``labels`` renames nodes and edge labels."""
    image, _, image_draw, _ = _pillow()
    styles = node_styles or NodeStyles()
    p = PALETTE
    title_font = _font(fontname, 14 * SCALE)
    small_font = _font(fontname, 11 * SCALE, italic=True)
    label_font = _font(fontname, 12 * SCALE)
    node_names = (labels or {}).get("nodes", {})
    edge_names = (labels or {}).get("edges", {})

    def title_of(node: Node) -> str:
        return node_names.get(node.id, node_lines(node)[0])

    hl = highlight or Highlight()

    def badge_of(node_id: str) -> str:
        if node_id in hl.interrupts:
            return "interrupt"
        return "next" if node_id in hl.next else ""

    def badge_width(badge: str) -> float:
        return label_font.getlength(badge) + 12 * SCALE if badge else 0.0

    def size(node: Node) -> tuple[float, float]:
        title, extra = node_lines(node)
        title = title_of(node)
        width = title_font.getlength(title) + badge_width(badge_of(node.id))
        for line in extra:
            width = max(width, small_font.getlength(line))
        height = 14 * SCALE * 1.3 + 20 * SCALE
        if extra:
            height += 6 * SCALE + len(extra) * 11 * SCALE * 1.3
        return max(width + 32 * SCALE, 40 * SCALE), height

    def label_box(edge: Any) -> tuple[float, float]:
        raw = str(edge.data)
        text = "\n".join(_wrap(edge_names.get(raw, raw), wrap_label_n_words))
        box = measure.multiline_textbbox((0, 0), text, font=label_font)
        return box[2] - box[0] + 16 * SCALE, box[3] - box[1] + 6 * SCALE

    measure = image_draw.Draw(image.new("RGB", (1, 1)))
    layout = layout_graph(
        graph,
        size=size,
        h_gap=28 * SCALE,
        v_gap=56 * SCALE,
        cluster_pad=14 * SCALE,
        cluster_head=18 * SCALE,
        dummy_width=12 * SCALE,
        margin=padding * SCALE,
        label_size=label_box,
        title_width=lambda path: 8 * SCALE + label_font.getlength(path.split(":")[-1]),
    )
    legend_texts = [f"{k}: {v}" for k, vs in hl.interrupts.items() for v in vs]
    legend = (30 + 16 * len(legend_texts)) * SCALE if highlight else 0
    legend_w = max([300 * SCALE] + [label_font.getlength(t) + 24 * SCALE for t in legend_texts])
    badges = max(
        (b.x + b.w + 80 * SCALE for k, b in layout.boxes.items() if k in hl.next), default=0
    )
    width = int(max(layout.width, legend_w if highlight else 0, badges)) + 1
    height = int(layout.height + legend) + 1
    # an RGB canvas makes the RGBA drawing below blend (Pillow replaces pixels otherwise)
    mode = "RGBA" if background == "transparent" else "RGB"
    img = image.new(mode, (width, height), _rgba(background))
    draw = image_draw.Draw(img, "RGBA")

    for cluster in sorted(layout.clusters, key=lambda c: c.depth):
        marked = cluster.path in hl.next
        draw.rounded_rectangle(
            [cluster.x, cluster.y, cluster.x + cluster.w, cluster.y + cluster.h],
            radius=4 * SCALE,
            fill=_rgba(p.cluster_fill),
            outline=_rgba(p.next_stroke if marked else p.cluster_stroke),
            width=(3 if marked else 1) * SCALE,
        )
        draw.text(
            (cluster.x + 8 * SCALE, cluster.y + 3 * SCALE),
            cluster.path.split(":")[-1],
            font=label_font,
            fill=_rgba(p.text),
        )

    edge_color = _rgba(p.edge)
    for route in layout.routes:
        pts = route.points
        if curve_style is not CurveStyle.LINEAR:
            pts = _rounded(pts, 12 * SCALE)
        for a, b in itertools.pairwise(pts):
            if route.edge.conditional:
                _dashed(draw, a, b, edge_color, int(1.3 * SCALE))
            else:
                draw.line([a, b], fill=edge_color, width=int(1.3 * SCALE))
        (x0, y0), (x1, y1) = pts[-2], pts[-1]
        angle = math.atan2(y1 - y0, x1 - x0)
        size_a = 8 * SCALE
        left = (x1 - size_a * math.cos(angle - 0.4), y1 - size_a * math.sin(angle - 0.4))
        right = (x1 - size_a * math.cos(angle + 0.4), y1 - size_a * math.sin(angle + 0.4))
        draw.polygon([(x1, y1), left, right], fill=edge_color)
    for route in layout.routes:
        if route.edge.data is None or route.label_at is None:
            continue
        raw = str(route.edge.data)
        text = "\n".join(_wrap(edge_names.get(raw, raw), wrap_label_n_words))
        if not text.strip():
            continue
        box = draw.multiline_textbbox((0, 0), text, font=label_font, align="center")
        w, h = box[2] - box[0] + 8 * SCALE, box[3] - box[1] + 6 * SCALE
        lx, ly = route.label_at
        if route.self_loop:
            lx += w / 2 + 4 * SCALE
        draw.rounded_rectangle(
            [lx - w / 2, ly - h / 2, lx + w / 2, ly + h / 2],
            radius=3 * SCALE,
            fill=_rgba(p.label_bg),
        )
        draw.multiline_text(
            (lx, ly), text, font=label_font, fill=_rgba(p.text), anchor="mm", align="center"
        )

    first, last = graph.first_node(), graph.last_node()
    for node_id, box in layout.boxes.items():
        node = box.node
        css = role_style(styles, node_role(node, first, last))
        try:
            opacity = float(css.get("fill-opacity", "1"))
        except ValueError:
            opacity = 1.0
        fill = _rgba(css.get("fill", "#f2f0ff"), opacity) if opacity > 0 else None
        waiting = hl.interrupts.get(node_id)
        outline, line_w, badge = p.stroke, 1, ""
        if waiting:
            outline, line_w, badge = p.interrupt_stroke, 3, "interrupt"
        elif node_id in hl.next:
            outline, line_w, badge = p.next_stroke, 3, "next"
        name = node.name.split(":")[-1]
        radius = box.h / 2 if name in ("__start__", "__end__") else 5 * SCALE
        draw.rounded_rectangle(
            [box.x, box.y, box.x + box.w, box.y + box.h],
            radius=radius,
            fill=fill,
            outline=_rgba(outline),
            width=line_w * SCALE,
        )
        _, extra = node_lines(node)
        ty = box.y + 10 * SCALE + 14 * SCALE * 0.65
        bw = badge_width(badge)
        draw.text(
            (box.cx - bw / 2, ty), title_of(node), font=title_font, fill=_rgba(p.text), anchor="mm"
        )
        if extra:
            hr = box.y + 10 * SCALE + 14 * SCALE * 1.3 + 3 * SCALE
            draw.line(
                [(box.x + 6 * SCALE, hr), (box.x + box.w - 6 * SCALE, hr)],
                fill=_rgba(p.stroke),
                width=1,
            )
            for i, line in enumerate(extra):
                y = hr + (i + 0.75) * 11 * SCALE * 1.3
                draw.text((box.cx, y), line, font=small_font, fill=_rgba(p.text), anchor="mm")
        if badge:
            color = _rgba(p.interrupt_stroke if waiting else p.next_stroke)
            bx0 = box.x + box.w - bw - 6 * SCALE
            draw.rounded_rectangle(
                [bx0, ty - 9 * SCALE, bx0 + bw, ty + 9 * SCALE], radius=9 * SCALE, fill=color
            )
            draw.text(
                (bx0 + bw / 2, ty), badge, font=label_font, fill=(255, 255, 255, 255), anchor="mm"
            )

    if highlight:
        y = layout.height + 10 * SCALE
        draw.rectangle(
            [12 * SCALE, y, 24 * SCALE, y + 12 * SCALE],
            outline=_rgba(p.next_stroke),
            width=3 * SCALE,
        )
        draw.text((30 * SCALE, y - SCALE), "runs next", font=label_font, fill=_rgba(p.text))
        draw.rectangle(
            [120 * SCALE, y, 132 * SCALE, y + 12 * SCALE],
            outline=_rgba(p.interrupt_stroke),
            width=3 * SCALE,
        )
        draw.text(
            (138 * SCALE, y - SCALE), "waits on an interrupt", font=label_font, fill=_rgba(p.text)
        )
        line_y = y + 20 * SCALE
        for node_id, values in hl.interrupts.items():
            for value in values:
                draw.text(
                    (12 * SCALE, line_y), f"{node_id}: {value}", font=label_font, fill=_rgba(p.text)
                )
                line_y += 16 * SCALE

    buffer = io.BytesIO()
    img.save(buffer, format="PNG")
    return buffer.getvalue()
