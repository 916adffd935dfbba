"""Plain-text drawing: boxes joined by lines of ``*`` (always) or ``.`` (conditional)."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

from stategraph.drawing._layout import layout_graph

if TYPE_CHECKING:
    from stategraph.drawing._elements import DrawnGraph, Node

__all__ = ["render_ascii"]


def _label(node: Node) -> str:
    return node.name.split(":")[-1] if ":" in node.id else node.name


class _Canvas:
    def __init__(self, width: int, height: int) -> None:
        self.rows = [[" "] * width for _ in range(height)]
        self.width = width
        self.height = height

    def put(self, x: int, y: int, char: str, *, over: str | None = None) -> None:
        if 0 <= y < self.height and 0 <= x < self.width:
            if over is None or self.rows[y][x] in over:
                self.rows[y][x] = char

    def text(self, x: int, y: int, text: str, *, over: str | None = None) -> None:
        for i, ch in enumerate(text):
            self.put(x + i, y, ch, over=over)

    def line(self, a: tuple[int, int], b: tuple[int, int], char: str) -> None:
        (x0, y0), (x1, y1) = a, b
        steps = max(abs(x1 - x0), abs(y1 - y0))
        for i in range(steps + 1):
            t = i / steps if steps else 0.0
            self.put(round(x0 + (x1 - x0) * t), round(y0 + (y1 - y0) * t), char, over=" *.-:")

    def render(self) -> str:
        lines = ["".join(r).rstrip() for r in self.rows]
        while lines and not lines[-1]:
            lines.pop()
        while lines and not lines[0]:
            lines.pop(0)
        indent = min((len(x) - len(x.lstrip()) for x in lines if x), default=0)
        return "\n".join(x[indent:] for x in lines)


def render_ascii(graph: DrawnGraph) -> str:
    """The graph drawn with characters, top to bottom."""
    if not graph.nodes:
        return ""
    layout = layout_graph(
        graph,
        size=lambda n: (len(_label(n)) + 4, 3),
        h_gap=4,
        v_gap=4,
        cluster_pad=2,
        cluster_head=1,
        margin=1,
        # frames as wide as their title (written from the third column of the top row);
        # edges cross the title row where they are (a character drawing has no room)
        title_width=lambda path: len(path.split(":")[-1]) + 4,
        route_around_titles=False,
    )
    canvas = _Canvas(int(layout.width) + 8, int(layout.height) + 2)
    for cluster in layout.clusters:
        x0, y0 = round(cluster.x), round(cluster.y)
        x1, y1 = round(cluster.x + cluster.w), round(cluster.y + cluster.h)
        for x in range(x0, x1 + 1):
            canvas.put(x, y0, "-")
            canvas.put(x, y1, "-")
        for y in range(y0, y1 + 1):
            canvas.put(x0, y, ":")
            canvas.put(x1, y, ":")
        canvas.text(x0 + 2, y0, f" {cluster.path.split(':')[-1]} ")
    for route in layout.routes:
        char = "." if route.edge.conditional else "*"
        if route.self_loop:
            box = layout.boxes[route.edge.source]
            right, top = round(box.x + box.w), round(box.y)
            canvas.text(right, top, char * 2)
            canvas.put(right + 1, top + 1, char)
            canvas.text(right, top + 2, "<" + char)
            continue
        pts = [(round(x), round(y)) for x, y in route.points]
        target = layout.boxes[route.edge.target]
        down = route.points[-1][1] <= target.y + 0.01
        # stop one row short of the target box and put the arrow head there
        last = (pts[-1][0], pts[-1][1] - 1 if down else pts[-1][1])
        if not down:
            first = (pts[0][0], pts[0][1] - 1)
            pts = [first, *pts[1:]]
        pts = [*pts[:-1], last]
        for a, b in itertools.pairwise(pts):
            canvas.line(a, b, char)
        canvas.put(last[0], last[1], "v" if down else "^")
    for box in layout.boxes.values():
        x, y, w = round(box.x), round(box.y), round(box.w)
        canvas.text(x, y, "+" + "-" * (w - 2) + "+")
        canvas.text(x, y + 1, "| " + _label(box.node) + " |")
        canvas.text(x, y + 2, "+" + "-" * (w - 2) + "+")
    for route in layout.routes:
        if route.edge.data is None or route.label_at is None or route.self_loop:
            continue
        text = str(route.edge.data)
        lx, ly = route.label_at
        canvas.text(round(lx) + 1, round(ly), text, over=" *.")
    return canvas.render()
