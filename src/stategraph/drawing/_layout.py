"""A layered (Sugiyama-style) layout of a :class:`~stategraph.drawing._graph.Graph`.

One engine serves every picture renderer (ASCII, SVG, PNG); they differ only in how
big a node is and how much room they leave between things. The steps:

1. **Cycles**: a depth-first walk from the first node finds the edges that close a
   loop; they are laid out reversed so the rest forms layers top to bottom.
2. **Ranks**: each node sits one layer below its lowest predecessor (longest path);
   nodes that only feed others are pulled down next to them; ``__end__`` goes last.
3. **Long edges** get one invisible waypoint per layer they cross.
4. **Order within layers**: repeated barycenter sweeps (down, then up) keep the order
   with the fewest crossings; nodes of one subgraph stay side by side.
5. **Coordinates**: each node moves towards the mean position of its neighbours while
   keeping its order and spacing; subgraph frames are kept clear of other nodes.
6. **Routing**: every edge becomes a polyline from a port on its source to a port on
   its target through its waypoints; self-loops get a loop on the node's right side.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from stategraph.constants import END
from stategraph.drawing._mermaid import parent_path

if TYPE_CHECKING:
    from stategraph.drawing._elements import DrawnGraph, Edge, Node

__all__ = ["Box", "EdgeRoute", "Cluster", "Layout", "layout_graph"]

Point = tuple[float, float]


@dataclass
class Box:
    """A node's rectangle: top-left corner ``(x, y)``, width and height."""

    node: Node
    x: float
    y: float
    w: float
    h: float
    layer: int

    @property
    def cx(self) -> float:
        """Horizontal center."""
        return self.x + self.w / 2

    @property
    def cy(self) -> float:
        """Vertical center."""
        return self.y + self.h / 2


@dataclass
class EdgeRoute:
    """An edge's path: points from the source port to the target port."""

    edge: Edge
    points: list[Point]
    label_at: Point | None = None
    self_loop: bool = False


@dataclass
class Cluster:
    """The frame around the nodes of one subgraph (``path`` is its id prefix)."""

    path: str
    x: float
    y: float
    w: float
    h: float
    depth: int


@dataclass
class Layout:
    """Where everything goes; ``width`` and ``height`` bound the whole picture."""

    boxes: dict[str, Box] = field(default_factory=dict)
    routes: list[EdgeRoute] = field(default_factory=list)
    clusters: list[Cluster] = field(default_factory=list)
    width: float = 0.0
    height: float = 0.0


@dataclass
class _Item:
    """A node or a waypoint of a long edge, in one layer."""

    key: str
    layer: int
    w: float
    h: float
    path: str
    x: float = 0.0
    pos: int = 0


def _ancestors(path: str) -> list[str]:
    parts = path.split(":") if path else []
    return [":".join(parts[:i]) for i in range(1, len(parts))]


def _find_back_edges(ids: list[str], edges: list[tuple[str, str]], first: str | None) -> set[int]:
    succ: dict[str, list[tuple[int, str]]] = {k: [] for k in ids}
    for i, (s, t) in enumerate(edges):
        succ[s].append((i, t))
    state: dict[str, int] = {}
    back: set[int] = set()
    roots = ([first] if first else []) + ids
    for root in roots:
        if root in state:
            continue
        stack: list[tuple[str, int]] = [(root, 0)]
        state[root] = 1
        while stack:
            node, idx = stack[-1]
            if idx < len(succ[node]):
                stack[-1] = (node, idx + 1)
                edge_index, nxt = succ[node][idx]
                if state.get(nxt) == 1:
                    back.add(edge_index)
                elif nxt not in state:
                    state[nxt] = 1
                    stack.append((nxt, 0))
            else:
                state[node] = 2
                stack.pop()
    return back


def _ranks(ids: list[str], dag: list[tuple[str, str]], first: str | None) -> dict[str, int]:
    preds: dict[str, list[str]] = {k: [] for k in ids}
    succs: dict[str, list[str]] = {k: [] for k in ids}
    for s, t in dag:
        preds[t].append(s)
        succs[s].append(t)
    indeg = {k: len(v) for k, v in preds.items()}
    order = [k for k in ids if indeg[k] == 0]
    topo: list[str] = []
    while order:
        node = order.pop(0)
        topo.append(node)
        for t in succs[node]:
            indeg[t] -= 1
            if indeg[t] == 0:
                order.append(t)
    rank = dict.fromkeys(ids, 0)
    for node in topo:
        for t in succs[node]:
            rank[t] = max(rank[t], rank[node] + 1)
    # sources other than the first node sit right above their highest successor
    for node in reversed(topo):
        if not preds[node] and succs[node] and node != first:
            rank[node] = max(0, min(rank[t] for t in succs[node]) - 1)
    # the end sits below everything else
    if END in rank and len(ids) > 1:
        rank[END] = max(r for k, r in rank.items() if k != END) + 1
    return rank


def _crossings(upper: list[_Item], lower: list[_Item], links: list[tuple[str, str]]) -> int:
    up = {it.key: it.pos for it in upper}
    low = {it.key: it.pos for it in lower}
    pairs = sorted((up[a], low[b]) for a, b in links if a in up and b in low)
    count = 0
    for i in range(len(pairs)):
        for j in range(i + 1, len(pairs)):
            if pairs[i][0] < pairs[j][0] and pairs[i][1] > pairs[j][1]:
                count += 1
    return count


def _group_sort(items: list[_Item], score: dict[str, float], depth: int = 0) -> list[_Item]:
    """Sort by score, keeping the members of each subgraph next to each other."""

    def head(it: _Item) -> str:
        parts = it.path.split(":") if it.path else []
        return ":".join(parts[: depth + 1]) if len(parts) > depth else ""

    groups: dict[str, list[_Item]] = {}
    for it in items:
        groups.setdefault(head(it), []).append(it)
    blocks: list[tuple[float, list[_Item]]] = []
    for key, members in groups.items():
        if key:
            inner = _group_sort(members, score, depth + 1)
            blocks.append((sum(score[m.key] for m in members) / len(members), inner))
        else:
            blocks.extend((score[m.key], [m]) for m in members)
    blocks.sort(key=lambda b: b[0])
    return [it for _, block in blocks for it in block]


def layout_graph(
    graph: DrawnGraph,
    *,
    size: Callable[[Node], tuple[float, float]],
    h_gap: float,
    v_gap: float,
    cluster_pad: float = 0.0,
    cluster_head: float = 0.0,
    dummy_width: float = 1.0,
    margin: float = 0.0,
    label_size: Callable[[Edge], tuple[float, float]] | None = None,
    title_width: Callable[[str], float] | None = None,
    route_around_titles: bool = True,
) -> Layout:
    """Lay ``graph`` out; ``size(node)`` gives each node's width and height.

    ``label_size(edge)``, when given, makes room in the picture for edge labels.
    ``title_width(path)``, when given, is how far a subgraph frame's title reaches from
    the frame's left side: the frame is at least that wide and, with
    ``route_around_titles``, edges entering or leaving the frame through its header pass
    to the right of the title instead of across it.
    """
    ids = list(graph.nodes)
    if not ids:
        return Layout(width=2 * margin, height=2 * margin)
    first_node = graph.first_node()
    first = first_node.id if first_node is not None else None
    plain = [(e.source, e.target) for e in graph.edges if e.source != e.target]
    plain = [(s, t) for s, t in plain if s in graph.nodes and t in graph.nodes]
    back = _find_back_edges(ids, plain, first)
    dag_edges = [(t, s) if i in back else (s, t) for i, (s, t) in enumerate(plain)]
    rank = _ranks(ids, list(dict.fromkeys(dag_edges)), first)

    items: dict[str, _Item] = {}
    for k in ids:
        w, h = size(graph.nodes[k])
        items[k] = _Item(k, rank[k], w, h, parent_path(k))
    # waypoints of long edges; chains[i] lists the keys from top to bottom
    chains: list[list[str]] = []
    links: list[tuple[str, str]] = []
    for i, (s, t) in enumerate(dag_edges):
        chain = [s]
        common = parent_path(s) if parent_path(s) == parent_path(t) else ""
        for layer in range(rank[s] + 1, rank[t]):
            key = f"\0{i}:{layer}"
            items[key] = _Item(key, layer, dummy_width, 0.0, common)
            chain.append(key)
        chain.append(t)
        chains.append(chain)
        links.extend(itertools.pairwise(chain))
    links = list(dict.fromkeys(links))
    n_layers = max(it.layer for it in items.values()) + 1
    layers: list[list[_Item]] = [[] for _ in range(n_layers)]
    for it in items.values():
        layers[it.layer].append(it)
    for layer_items in layers:
        for p, it in enumerate(layer_items):
            it.pos = p

    up_links: dict[str, list[str]] = {}
    down_links: dict[str, list[str]] = {}
    for a, b in links:
        down_links.setdefault(a, []).append(b)
        up_links.setdefault(b, []).append(a)

    def total() -> int:
        return sum(_crossings(layers[i], layers[i + 1], links) for i in range(n_layers - 1))

    def sweep(downward: bool) -> None:
        rng = range(1, n_layers) if downward else range(n_layers - 2, -1, -1)
        for li in rng:
            neigh = up_links if downward else down_links
            score: dict[str, float] = {}
            for it in layers[li]:
                others = [items[o].pos for o in neigh.get(it.key, ())]
                score[it.key] = sum(others) / len(others) if others else float(it.pos)
            layers[li] = _group_sort(layers[li], score)
            for p, it in enumerate(layers[li]):
                it.pos = p

    # initial order grouped by subgraph, then sweeps keeping the best
    for li in range(n_layers):
        layers[li] = _group_sort(layers[li], {it.key: float(it.pos) for it in layers[li]})
        for p, it in enumerate(layers[li]):
            it.pos = p
    best = total()
    best_order = [list(layer) for layer in layers]
    for iteration in range(8):
        if best == 0:
            break
        sweep(downward=iteration % 2 == 0)
        now = total()
        if now < best:
            best = now
            best_order = [list(layer) for layer in layers]
    layers = best_order
    for layer_items in layers:
        for p, it in enumerate(layer_items):
            it.pos = p

    def gap(a: _Item, b: _Item) -> float:
        # room between neighbours; more when they belong to different subgraphs
        pa, pb = a.path.split(":") if a.path else [], b.path.split(":") if b.path else []
        same = 0
        for x, y in zip(pa, pb, strict=False):
            if x != y:
                break
            same += 1
        extra = (len(pa) - same) + (len(pb) - same)
        return h_gap + extra * cluster_pad

    def pack(layer_items: list[_Item], want: dict[str, float]) -> None:
        # left-to-right and right-to-left packing around the wanted centers, averaged
        if not layer_items:
            return
        left = []
        cursor = -float("inf")
        prev: _Item | None = None
        for it in layer_items:
            lo = want[it.key] - it.w / 2
            if prev is not None:
                lo = max(lo, cursor + gap(prev, it))
            left.append(lo)
            cursor = lo + it.w
            prev = it
        right = [0.0] * len(layer_items)
        cursor = float("inf")
        nxt: _Item | None = None
        for idx in range(len(layer_items) - 1, -1, -1):
            it = layer_items[idx]
            hi = want[it.key] + it.w / 2
            if nxt is not None:
                hi = min(hi, cursor - gap(it, nxt))
            right[idx] = hi - it.w
            cursor = hi - it.w
            nxt = it
        for idx, it in enumerate(layer_items):
            it.x = (left[idx] + right[idx]) / 2
        # averaging can break the spacing; enforce it once more
        for idx in range(1, len(layer_items)):
            a, b = layer_items[idx - 1], layer_items[idx]
            b.x = max(b.x, a.x + a.w + gap(a, b))

    want = {}
    for layer_items in layers:
        cursor = 0.0
        for idx, it in enumerate(layer_items):
            if idx:
                cursor += gap(layer_items[idx - 1], it)
            want[it.key] = cursor + it.w / 2
            cursor += it.w
    for layer_items in layers:
        pack(layer_items, want)
    for iteration in range(6):
        downward = iteration % 2 == 0
        order = range(1, n_layers) if downward else range(n_layers - 2, -1, -1)
        for li in order:
            neigh = up_links if downward else down_links
            want = {}
            for it in layers[li]:
                others = [items[o] for o in neigh.get(it.key, ())]
                both = others + [
                    items[o] for o in (down_links if downward else up_links).get(it.key, ())
                ]
                pool = others or both
                want[it.key] = (
                    sum(o.x + o.w / 2 for o in pool) / len(pool) if pool else it.x + it.w / 2
                )
            pack(layers[li], want)

    # vertical placement: each layer is as tall as its tallest node, with room above
    # and below for the frames of the subgraphs that start or end there
    heights = [max((it.h for it in layer), default=0.0) for layer in layers]
    above = [0.0] * n_layers
    below = [0.0] * n_layers
    for path in {parent_path(k) for k in ids if parent_path(k)} | {
        p for k in ids for p in _ancestors(parent_path(k))
    }:
        spanned = [items[k].layer for k in ids if k.startswith(path + ":")]
        if spanned:
            above[min(spanned)] += cluster_pad + cluster_head
            below[max(spanned)] += cluster_pad
    tops: list[float] = []
    cursor = 0.0
    for li, h in enumerate(heights):
        cursor += above[li]
        tops.append(cursor)
        cursor += h + below[li] + v_gap

    # keep subgraph frames clear of the nodes of other subgraphs
    paths = sorted({it.path for it in items.values() if it.path}, key=lambda p: p.count(":"))
    for path in paths:
        members = [it for it in items.values() if it.path == path or it.path.startswith(path + ":")]
        member_keys = {it.key for it in members}
        depth = path.count(":") + 1
        lo = min(it.x for it in members) - cluster_pad * depth
        hi = max(it.x + it.w for it in members) + cluster_pad * depth
        if title_width is not None:  # the frame is at least as wide as its title
            hi = max(hi, lo + title_width(path) + cluster_pad)
        for li in {it.layer for it in members}:
            row = layers[li]
            idxs = [i for i, it in enumerate(row) if it.key in member_keys]
            limit = lo - h_gap
            for i in range(min(idxs) - 1, -1, -1):
                row[i].x = min(row[i].x, limit - row[i].w)
                if i:
                    limit = row[i].x - gap(row[i - 1], row[i])
            limit = hi + h_gap
            for i in range(max(idxs) + 1, len(row)):
                row[i].x = max(row[i].x, limit)
                if i + 1 < len(row):
                    limit = row[i].x + row[i].w + gap(row[i], row[i + 1])

    min_x = min(it.x for it in items.values())
    layout = Layout()
    for k in ids:
        it = items[k]
        it.x += margin - min_x
        top = tops[it.layer] + (heights[it.layer] - it.h) / 2 + margin
        layout.boxes[k] = Box(graph.nodes[k], it.x, top, it.w, it.h, it.layer)
    for key, it in items.items():
        if key not in graph.nodes:
            it.x += margin - min_x

    def center(key: str) -> Point:
        it = items[key]
        return (it.x + it.w / 2, tops[it.layer] + heights[it.layer] / 2 + margin)

    for path in paths:
        members_boxes = [
            b for k, b in layout.boxes.items() if parent_path(k) == path or k.startswith(path + ":")
        ]
        if not members_boxes:
            continue
        depth = path.count(":") + 1
        nested = max((p.count(":") + 1 for p in paths if p.startswith(path + ":")), default=depth)
        pad = cluster_pad * (nested - depth + 1)
        x0 = min(b.x for b in members_boxes) - pad
        x1 = max(b.x + b.w for b in members_boxes) + pad
        if title_width is not None:
            x1 = max(x1, x0 + title_width(path) + cluster_pad)
        y0 = min(b.y for b in members_boxes) - pad - cluster_head
        y1 = max(b.y + b.h for b in members_boxes) + pad
        layout.clusters.append(Cluster(path, x0, y0, x1 - x0, y1 - y0, depth))

    # ports: spread the edges leaving/entering a side of a box along that side
    ports: dict[tuple[str, str], list[tuple[float, int]]] = {}
    raw: list[tuple[int, list[str], bool]] = []
    chain_of: dict[tuple[str, str], list[str]] = {}
    for i, (s, t) in enumerate(dag_edges):
        chain_of.setdefault((s, t), chains[i])
    for ei, edge in enumerate(graph.edges):
        if (
            edge.source == edge.target
            or edge.source not in graph.nodes
            or edge.target not in graph.nodes
        ):
            continue
        pair = (edge.source, edge.target)
        if pair in chain_of:
            chain = list(chain_of[pair])
            reversed_ = False
        else:
            chain = list(reversed(chain_of[(edge.target, edge.source)]))
            reversed_ = True
        raw.append((ei, chain, reversed_))
        down = items[chain[-1]].layer > items[chain[0]].layer
        s_side = "bottom" if down else "top"
        t_side = "top" if down else "bottom"
        ports.setdefault((edge.source, s_side), []).append((center(chain[1])[0], ei))
        ports.setdefault((edge.target, t_side), []).append((center(chain[-2])[0], ei))
    port_x: dict[tuple[str, str, int], float] = {}
    for (node_id, side), entries in ports.items():
        box = layout.boxes[node_id]
        entries.sort()
        n = len(entries)
        for idx, (_, ei) in enumerate(entries):
            frac = 0.5 if n == 1 else 0.2 + 0.6 * idx / (n - 1)
            port_x[(node_id, side, ei)] = box.x + box.w * frac
    for ei, chain, _ in raw:
        edge = graph.edges[ei]
        sb, tb = layout.boxes[edge.source], layout.boxes[edge.target]
        down = items[chain[-1]].layer > items[chain[0]].layer
        if down:
            start = (port_x[(edge.source, "bottom", ei)], sb.y + sb.h)
            end = (port_x[(edge.target, "top", ei)], tb.y)
        else:
            start = (port_x[(edge.source, "top", ei)], sb.y)
            end = (port_x[(edge.target, "bottom", ei)], tb.y + tb.h)
        # a long edge runs straight down (or up) through each layer it passes, frame
        # headers and paddings included, so it never cuts the corner of a frame
        mids: list[Point] = []
        for k in chain[1:-1]:
            li = items[k].layer
            x = items[k].x + items[k].w / 2
            run = [
                (x, tops[li] + margin - above[li]),
                (x, tops[li] + margin + heights[li] + below[li]),
            ]
            mids.extend(run if down else run[::-1])
        points = [start, *mids, end]
        if mids:
            middle = chain[1:-1][(len(chain) - 2) // 2]
            label_at = center(middle)
        else:
            label_at = ((start[0] + end[0]) / 2, (start[1] + end[1]) / 2)
        if title_width is not None and route_around_titles:
            for cluster in layout.clusters:
                points, moved = _around_title(
                    points, cluster, title_width(cluster.path) + cluster_pad / 2, cluster_head
                )
                if moved and not mids:
                    (ax, ay), (bx, by) = points[0], points[1]
                    label_at = ((ax + bx) / 2, (ay + by) / 2)
        layout.routes.append(EdgeRoute(edge, points, label_at))
    for edge in graph.edges:
        if edge.source == edge.target and edge.source in layout.boxes:
            box = layout.boxes[edge.source]
            reach = max(h_gap * 0.6, 2.0)
            pts = [
                (box.x + box.w, box.y + box.h * 0.3),
                (box.x + box.w + reach, box.y + box.h * 0.3),
                (box.x + box.w + reach, box.y + box.h * 0.7),
                (box.x + box.w, box.y + box.h * 0.7),
            ]
            layout.routes.append(
                EdgeRoute(edge, pts, (box.x + box.w + reach, box.cy), self_loop=True)
            )

    xs = [b.x + b.w for b in layout.boxes.values()] + [c.x + c.w for c in layout.clusters]
    ys = [b.y + b.h for b in layout.boxes.values()] + [c.y + c.h for c in layout.clusters]
    xs += [p[0] for r in layout.routes for p in r.points]
    if label_size is not None:
        for r in layout.routes:
            if r.edge.data is not None and r.label_at is not None:
                lw, lh = label_size(r.edge)
                shift = lw if r.self_loop else lw / 2
                xs.append(r.label_at[0] + shift)
                ys.append(r.label_at[1] + lh / 2)
    low_x = min([0.0] + [c.x for c in layout.clusters])
    low_y = min([0.0] + [c.y for c in layout.clusters])
    if low_x < 0 or low_y < 0:
        _shift(layout, -low_x + (margin if low_x < 0 else 0), -low_y + (margin if low_y < 0 else 0))
        xs = [x - low_x + (margin if low_x < 0 else 0) for x in xs]
        ys = [y - low_y + (margin if low_y < 0 else 0) for y in ys]
    layout.width = max(xs) + margin
    layout.height = max(ys) + margin
    return layout


def _around_title(
    points: list[Point], cluster: Cluster, reach: float, head: float
) -> tuple[list[Point], bool]:
    """``points`` rerouted so no segment crosses ``cluster``'s title.

    The title sits in the header band (``head`` tall) at the top of the frame and spans
    ``reach`` from its left side. A segment crossing the band over the title gets two
    waypoints that take it through the band just right of the title. Returns the points
    and whether anything moved. A frame too narrow to pass beside its title is left as
    it is.
    """
    top, bottom = cluster.y, cluster.y + head
    x_safe = cluster.x + reach
    if x_safe >= cluster.x + cluster.w:
        return points, False
    out = [points[0]]
    moved = False
    for a, b in itertools.pairwise(points):
        lo, hi = min(a[1], b[1]), max(a[1], b[1])
        if hi > top and lo < bottom and hi > lo:
            xs = [
                a[0] + (b[0] - a[0]) * (min(max(y, lo), hi) - a[1]) / (b[1] - a[1])
                for y in (top, bottom)
            ]
            if any(cluster.x <= x < x_safe for x in xs):
                band = [(x_safe, top), (x_safe, bottom)]
                out.extend(band if b[1] > a[1] else band[::-1])
                moved = True
        out.append(b)
    return out, moved


def _shift(layout: Layout, dx: float, dy: float) -> None:
    for b in layout.boxes.values():
        b.x += dx
        b.y += dy
    for r in layout.routes:
        r.points = [(x + dx, y + dy) for x, y in r.points]
        if r.label_at is not None:
            r.label_at = (r.label_at[0] + dx, r.label_at[1] + dy)
    for c in layout.clusters:
        c.x += dx
        c.y += dy
