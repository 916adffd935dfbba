"""ASCII, SVG, PNG and notebook renderings."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET

import pytest

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.drawing import Graph
from stategraph.graph import START, StateGraph
from stategraph.types import interrupt

from .graphs import State, chain, nested_graph, noop, review_graph

SVG = "{http://www.w3.org/2000/svg}"


def paused_review():
    def review(state: State) -> dict:
        return {"log": [interrupt({"question": "publish?"})]}

    builder = review_graph()
    builder.nodes["review"].func = review
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    graph.invoke({"log": []}, config)
    return graph, graph.get_state(config)


def test_ascii_draws_a_box_per_node_and_arrows():
    text = review_graph().compile().get_graph().draw_ascii()
    for name in ("__start__", "draft", "review", "publish", "archive", "__end__"):
        assert f"| {name} |" in text
    assert "v" in text and "." in text and "*" in text  # arrows, dotted and solid lines
    assert "approved" in text and "rejected" in text
    lines = text.splitlines()
    assert lines[0].lstrip().startswith("+") and lines[-1].lstrip().startswith("+")
    assert lines.index(next(ln for ln in lines if "| draft |" in ln)) < lines.index(
        next(ln for ln in lines if "| review |" in ln)
    )


def test_print_ascii(capsys):
    chain("only").compile().get_graph().print_ascii()
    assert "| only |" in capsys.readouterr().out


def test_svg_is_well_formed_and_self_contained():
    svg = review_graph().compile().get_graph().draw_svg()
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    ids = [g.get("data-id") for g in root.iter(f"{SVG}g") if g.get("class") == "node"]
    assert ids == ["__start__", "draft", "review", "publish", "archive", "__end__"]
    edges = [p for p in root.iter(f"{SVG}path") if p.get("class") == "edge"]
    assert len(edges) == 6
    assert sum(1 for p in edges if p.get("stroke-dasharray")) == 2
    assert "href" not in svg and "<script" not in svg


def test_svg_edge_labels_hide_the_line_behind_them():
    """Label backgrounds are opaque and drawn after the edges: no line shows through."""
    root = ET.fromstring(review_graph().compile().get_graph().draw_svg())
    children = list(root)
    labels = [i for i, el in enumerate(children) if el.get("class") == "edge-label"]
    edges = [i for i, el in enumerate(children) if el.get("class") == "edge"]
    assert labels and edges and min(labels) > max(edges)
    for i in labels:
        rect = children[i].find(f"{SVG}rect")
        assert rect is not None and rect.get("opacity") is None
        assert rect.get("fill-opacity") is None


def test_svg_groups_subgraphs_in_frames():
    root = ET.fromstring(nested_graph().compile().get_graph(xray=True).draw_svg())
    frames = [g.get("data-id") for g in root.iter(f"{SVG}g") if g.get("class") == "cluster"]
    assert frames == ["inner"]


def test_svg_marks_what_a_snapshot_runs_next_and_its_interrupts(tmp_path):
    graph, state = paused_review()
    path = tmp_path / "paused.svg"
    svg = graph.get_graph().draw_svg(state=state, output_file_path=str(path))
    assert path.read_text() == svg
    root = ET.fromstring(svg)
    review = next(g for g in root.iter(f"{SVG}g") if g.get("data-id") == "review")
    rect = review.find(f"{SVG}rect")
    assert rect.get("stroke") == "#c92a2a" and rect.get("stroke-width") == "3.0"
    assert "publish?" in review.find(f"{SVG}title").text
    draft = next(g for g in root.iter(f"{SVG}g") if g.get("data-id") == "draft")
    assert draft.find(f"{SVG}rect").get("stroke-width") == "1.0"
    assert 'review: {"question": "publish?"}' in svg


def test_next_node_without_interrupt_is_marked_as_next():
    builder = chain("a", "b")
    graph = builder.compile(checkpointer=InMemorySaver(), interrupt_before=["b"])
    config = {"configurable": {"thread_id": "t"}}
    graph.invoke({"log": []}, config)
    root = ET.fromstring(graph.get_graph().draw_svg(state=graph.get_state(config)))
    b = next(g for g in root.iter(f"{SVG}g") if g.get("data-id") == "b")
    assert b.find(f"{SVG}rect").get("stroke") == "#e8590c"


def test_state_must_be_a_snapshot():
    with pytest.raises(TypeError, match="StateSnapshot"):
        chain("a").compile().get_graph().draw_svg(state={"next": ()})


def test_png_is_rendered_locally(tmp_path):
    PIL = pytest.importorskip("PIL.Image")
    graph, state = paused_review()
    target = tmp_path / "g.png"
    data = graph.get_graph().draw_png(str(target), state=state)
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and target.read_bytes() == data
    image = PIL.open(io.BytesIO(data))
    assert image.width > 200 and image.height > 400


def test_png_labels_rename_nodes_and_edges():
    pytest.importorskip("PIL")
    g = review_graph().compile().get_graph()
    plain = g.draw_png()
    renamed = g.draw_png(
        labels={
            "nodes": {"draft": "Write the first draft of the article, then send it for review"},
            "edges": {},
        }
    )
    from PIL import Image

    assert Image.open(io.BytesIO(renamed)).width > Image.open(io.BytesIO(plain)).width


def test_mermaid_png_is_painted_here_not_fetched(monkeypatch):
    pytest.importorskip("PIL")
    import socket

    def no_network(*args, **kwargs):
        raise AssertionError("draw_mermaid_png must not open a connection")

    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    data = (
        nested_graph().compile().get_graph(xray=True).draw_mermaid_png(background_color="#fafafa")
    )
    assert data.startswith(b"\x89PNG")


def test_unknown_font_is_a_clear_error():
    pytest.importorskip("PIL")
    with pytest.raises(ValueError, match=r"Cannot load font 'no-such-font\.ttf'"):
        chain("a").compile().get_graph().draw_png(fontname="no-such-font.ttf")


def test_notebook_bundle_for_graphs_and_compiled_graphs():
    compiled = review_graph().compile()
    bundle = compiled._repr_mimebundle_()
    assert set(bundle) == {"text/html", "image/svg+xml", "text/vnd.mermaid", "text/plain"}
    assert bundle["text/html"].count("<svg") == 1
    assert "Mermaid source" in bundle["text/html"]
    assert bundle["text/vnd.mermaid"] == compiled.get_graph().draw_mermaid()
    assert "| review |" in bundle["text/plain"]
    assert Graph()._repr_mimebundle_()["text/plain"] == ""


def test_every_renderer_copes_with_odd_names():
    builder = StateGraph(State)
    for name in ("x(y)", "my node", 'say "hi" & <bye>'):
        builder.add_node(name, noop)
    builder.add_edge(START, "x(y)")
    builder.add_edge("x(y)", "my node")
    builder.add_edge("my node", 'say "hi" & <bye>')
    g = builder.compile().get_graph()
    ET.fromstring(g.draw_svg())
    assert '| say "hi" & <bye> |' in g.draw_ascii()
    assert g.draw_mermaid().count("-->") == 4


def test_a_finished_sibling_of_a_failed_task_is_not_marked_as_next():
    """A step where ``a`` finished and ``b`` failed: only ``b`` runs next."""
    import threading

    a_done = threading.Event()

    def a(state: State) -> dict:
        a_done.set()
        return {"log": ["a"]}

    def b(state: State) -> dict:
        a_done.wait(timeout=10)
        raise ValueError("b failed")

    builder = StateGraph(State)
    builder.add_node("a", a)
    builder.add_node("b", b)
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    with pytest.raises(ValueError, match="b failed"):
        graph.invoke({"log": []}, config)
    state = graph.get_state(config)
    assert state.next == ("b",)
    assert sorted(t.name for t in state.tasks) == ["a", "b"]
    root = ET.fromstring(graph.get_graph().draw_svg(state=state))
    strokes = {
        g.get("data-id"): g.find(f"{SVG}rect").get("stroke")
        for g in root.iter(f"{SVG}g")
        if g.get("data-id") in ("a", "b")
    }
    assert strokes["b"] == "#e8590c"
    assert strokes["a"] != "#e8590c"
