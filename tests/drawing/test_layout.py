"""The layered layout engine behind the ASCII, SVG and PNG drawings."""

from __future__ import annotations

import itertools

from stategraph.drawing import Edge, Graph, Node
from stategraph.drawing._layout import Layout, layout_graph
from stategraph.graph import END, START, StateGraph

from .graphs import State, chain, nested_graph, noop, review_graph


def lay(g: Graph) -> Layout:
    return layout_graph(
        g,
        size=lambda n: (len(n.name) * 8 + 20, 30),
        h_gap=20,
        v_gap=40,
        cluster_pad=10,
        cluster_head=12,
    )


def overlaps(a, b) -> bool:
    return not (a.x + a.w <= b.x or b.x + b.w <= a.x or a.y + a.h <= b.y or b.y + b.h <= a.y)


def test_boxes_never_overlap_and_edges_point_down_except_loops():
    g = review_graph().compile().get_graph()
    out = lay(g)
    boxes = list(out.boxes.values())
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert not overlaps(a, b), (a.node.id, b.node.id)
    for route in out.routes:
        src, dst = out.boxes[route.edge.source], out.boxes[route.edge.target]
        assert dst.layer > src.layer
        assert route.points[0][1] == src.y + src.h and route.points[-1][1] == dst.y
    assert out.boxes["__start__"].layer == 0
    assert out.boxes["__end__"].layer == max(b.layer for b in boxes)


def test_back_edges_are_routed_upwards():
    builder = chain("a", "b", "c")
    builder.add_edge("c", "a")
    out = lay(builder.compile().get_graph())
    back = next(r for r in out.routes if (r.edge.source, r.edge.target) == ("c", "a"))
    assert back.points[0][1] == out.boxes["c"].y  # leaves from the top of c
    assert back.points[-1][1] == out.boxes["a"].y + out.boxes["a"].h  # enters a's bottom
    # the layer it crosses (b's) is passed by a vertical run, bottom to top
    (x1, y1), (x2, y2) = back.points[1:3]
    assert len(back.points) == 4 and x1 == x2 and y1 > y2
    b = out.boxes["b"]
    assert y1 >= b.y + b.h and y2 <= b.y


def test_crossings_are_removed_where_possible():
    # two chains whose nodes were added in crossing order
    g = Graph()
    for n in ["s", "a1", "b1", "b2", "a2"]:
        g.nodes[n] = Node(n, n, None, None)
    g.edges = [Edge("s", "a1"), Edge("s", "b1"), Edge("a1", "a2"), Edge("b1", "b2")]
    out = lay(g)
    b = out.boxes
    assert (b["a1"].x < b["b1"].x) == (b["a2"].x < b["b2"].x)


def test_subgraph_frames_hold_their_nodes_and_only_them():
    g = nested_graph().compile().get_graph(xray=True)
    out = lay(g)
    (frame,) = out.clusters
    assert frame.path == "inner"
    for node_id, box in out.boxes.items():
        inside = (
            frame.x <= box.x
            and box.x + box.w <= frame.x + frame.w
            and frame.y <= box.y
            and box.y + box.h <= frame.y + frame.h
        )
        assert inside == node_id.startswith("inner:"), node_id


def test_self_loop_is_drawn_beside_its_node_and_picture_bounds_cover_everything():
    g = Graph()
    g.nodes["a"] = Node("a", "a", None, None)
    g.edges = [Edge("a", "a", "again")]
    out = lay(g)
    (route,) = out.routes
    assert route.self_loop and route.points[0][0] == out.boxes["a"].x + out.boxes["a"].w
    assert out.width >= max(p[0] for p in route.points)
    assert out.height >= out.boxes["a"].y + out.boxes["a"].h


def test_empty_graph():
    assert lay(Graph()).boxes == {}


def test_long_edges_pass_frames_vertically_and_enter_beside_the_title():
    """An edge skipping the layers of a subgraph frame runs straight down beside it (no
    diagonal through the frame's corner), and an edge entering a frame crosses its
    header to the right of the title."""
    inner = chain("search", "read", "report").compile()
    builder = StateGraph(State)
    builder.add_node("boss", noop)
    builder.add_node("research_team", inner)
    builder.add_edge(START, "boss")
    builder.add_conditional_edges("boss", lambda s: END, ["research_team", END])
    graph = builder.compile().get_graph(xray=True)
    title = 100.0
    out = layout_graph(
        graph,
        size=lambda n: (60.0, 30.0),
        h_gap=20.0,
        v_gap=40.0,
        cluster_pad=10.0,
        cluster_head=16.0,
        dummy_width=8.0,
        title_width=lambda path: title,
    )
    (frame,) = out.clusters
    assert frame.w >= title + 10.0  # as wide as its title
    bypass = next(r for r in out.routes if (r.edge.source, r.edge.target) == ("boss", END))
    for (xa, ya), (xb, yb) in itertools.pairwise(bypass.points):
        if max(ya, yb) > frame.y and min(ya, yb) < frame.y + frame.h:  # beside the frame
            assert xa == xb and xa > frame.x + frame.w
    enter = next(r for r in out.routes if r.edge.target == "research_team:search")
    for (xa, ya), (xb, yb) in itertools.pairwise(enter.points):
        for y in (frame.y, frame.y + 16.0):
            if min(ya, yb) <= y <= max(ya, yb) and ya != yb:
                x = xa + (xb - xa) * (y - ya) / (yb - ya)
                assert x >= frame.x + title, (x, frame.x + title)
