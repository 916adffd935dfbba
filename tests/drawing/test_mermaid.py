"""Mermaid output: LangGraph's format and options, with safe ids."""

from __future__ import annotations

import pytest

from stategraph.drawing import CurveStyle, Edge, Graph, Node, NodeStyles

from .graphs import chain, review_graph

STYLES = (
    "\tclassDef default fill:#f2f0ff,line-height:1.2\n"
    "\tclassDef first fill-opacity:0\n"
    "\tclassDef last fill:#bfb6fc\n"
)


def graph_of(nodes: list[str], edges: list[Edge], meta: dict | None = None) -> Graph:
    g = Graph()
    for n in nodes:
        g.nodes[n] = Node(n, n, None, (meta or {}).get(n))
    g.edges = list(edges)
    return g


def test_styled_output_has_front_matter_shapes_and_classes():
    mermaid = chain("a", "b").compile().get_graph().draw_mermaid()
    assert mermaid == (
        "---\nconfig:\n  flowchart:\n    curve: linear\n---\n"
        "graph TD;\n"
        "\t__start__([<p>__start__</p>]):::first\n"
        "\ta(a)\n"
        "\tb(b)\n"
        "\t__end__([<p>__end__</p>]):::last\n"
        "\t__start__ --> a;\n"
        "\ta --> b;\n"
        "\tb --> __end__;\n" + STYLES
    )


def test_bare_output_and_conditional_labels():
    mermaid = review_graph().compile().get_graph().draw_mermaid(with_styles=False)
    assert mermaid == (
        "graph TD;\n"
        "\t__start__ --> draft;\n"
        "\tdraft --> review;\n"
        "\treview -. &nbsp;rejected&nbsp; .-> archive;\n"
        "\treview -. &nbsp;approved&nbsp; .-> publish;\n"
        "\tarchive --> __end__;\n"
        "\tpublish --> __end__;\n"
    )


def test_ids_are_escaped_so_similar_names_stay_distinct():
    g = graph_of(
        ["x(y)", "my node", "my_node"], [Edge("x(y)", "my node"), Edge("my node", "my_node")]
    )
    mermaid = g.draw_mermaid()
    assert "\tx\\28y\\29 --> my\\20node;" in mermaid
    assert "\tmy\\20node --> my_node;" in mermaid
    # a name holding Mermaid syntax characters is quoted, so the text stays text
    assert '\tx\\28y\\29(["x(y)"]):::first' in mermaid
    assert "\tmy\\20node(my node)" in mermaid


def test_quotes_inside_a_quoted_label_are_escaped():
    g = graph_of(['say "hi"'], [])
    assert '(["say #quot;hi#quot;"])' in g.draw_mermaid()


def test_options_curve_colors_front_matter_and_wrapping():
    g = graph_of(["a", "b"], [Edge("a", "b", "one two three four five", False)])
    mermaid = g.draw_mermaid(
        curve_style=CurveStyle.BASIS,
        node_colors=NodeStyles(default="fill:red", first="fill:green", last="fill:blue"),
        wrap_label_n_words=2,
        frontmatter_config={"title": "My graph", "config": {"theme": "neutral"}},
    )
    assert mermaid.startswith(
        "---\nconfig:\n  flowchart:\n    curve: basis\n  theme: neutral\ntitle: My graph\n---\n"
    )
    assert "\ta -- &nbsp;one two&nbsp<br>&nbspthree four&nbsp<br>&nbspfive&nbsp; --> b;" in mermaid
    assert mermaid.endswith(
        "\tclassDef default fill:red\n\tclassDef first fill:green\n\tclassDef last fill:blue\n"
    )


def test_curve_style_wins_over_front_matter_and_yaml_is_quoted_when_needed():
    g = graph_of(["a"], [])
    mermaid = g.draw_mermaid(
        curve_style=CurveStyle.STEP,
        frontmatter_config={"config": {"flowchart": {"curve": "basis"}}, "title": "a: b"},
    )
    assert "    curve: step\n" in mermaid and "title: 'a: b'\n" in mermaid


def test_wrap_must_be_positive():
    with pytest.raises(ValueError, match="wrap_label_n_words must be at least 1"):
        graph_of(["a"], []).draw_mermaid(wrap_label_n_words=0)


def test_metadata_is_listed_under_the_name():
    g = graph_of(
        ["a", "b"],
        [Edge("a", "b")],
        meta={"a": {"retries": 3, "tags": ["x", "y"], "skipped": {"nested": 1}}, "b": {"k": None}},
    )
    mermaid = g.draw_mermaid()
    assert "\ta([a<hr/><small><em>retries = 3\ntags = x, y</em></small>]):::first\n" in mermaid
    assert "\tb([b]):::last\n" in mermaid


def test_prefixed_ids_are_drawn_in_subgraph_blocks_with_self_loops_last():
    g = graph_of(
        ["s", "sub:p", "sub:q", "sub:deeper:r", "e"],
        [
            Edge("s", "sub:p"),
            Edge("sub:p", "sub:q", None, True),
            Edge("sub:q", "sub:deeper:r"),
            Edge("sub:deeper:r", "e"),
            Edge("s", "s"),
        ],
    )
    assert g.draw_mermaid(with_styles=False) == (
        "graph TD;\n"
        "\ts --> sub\\3ap;\n"
        "\tsub\\3adeeper\\3ar --> e;\n"
        "\tsubgraph sub\n"
        "\tsub\\3ap -.-> sub\\3aq;\n"
        "\tsub\\3aq --> sub\\3adeeper\\3ar;\n"
        "\tend\n"
        "\ts --> s;\n"
    )
    styled = g.draw_mermaid()
    assert "\tsubgraph sub\n\tsub\\3ap(p)\n\tsub\\3aq(q)\n" in styled
    assert "\tsubgraph deeper\n\tsub\\3adeeper\\3ar(r)\n\tend\n\tend\n" in styled


def test_two_subgraphs_with_the_same_name_are_an_error():
    g = graph_of(["a:x:n", "b:x:n"], [Edge("a:x:n", "b:x:n")])
    with pytest.raises(ValueError, match="both named 'x'"):
        g.draw_mermaid()
