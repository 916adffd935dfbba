"""get_graph(): which nodes and edges a compiled graph is drawn with."""

from __future__ import annotations

from typing import Literal

from stategraph.channels import LastValue
from stategraph.checkpoint.memory import InMemorySaver
from stategraph.drawing import Edge, Graph
from stategraph.graph import END, START, StateGraph
from stategraph.pregel import NodeBuilder, Pregel

from .graphs import State, chain, command_graph, nested_graph, noop, review_graph


def edges(g: Graph) -> list[tuple[str, str, object, bool]]:
    return [(e.source, e.target, e.data, e.conditional) for e in g.edges]


def test_nodes_in_order_with_start_and_end():
    g = chain("b", "a").compile().get_graph()
    assert list(g.nodes) == ["__start__", "b", "a", "__end__"]
    assert g.nodes["b"].data is not None and g.nodes["__end__"].data is None


def test_node_without_outgoing_edge_goes_to_end():
    builder = chain("a", "b")
    builder.add_node("c", noop)
    builder.add_edge("a", "c")
    assert edges(builder.compile().get_graph()) == [
        ("__start__", "a", None, False),
        ("a", "b", None, False),
        ("a", "c", None, False),
        ("b", "__end__", None, False),
        ("c", "__end__", None, False),
    ]


def test_path_map_keys_label_conditional_edges():
    assert edges(review_graph().compile().get_graph())[2:4] == [
        ("review", "archive", "rejected", True),
        ("review", "publish", "approved", True),
    ]


def test_path_map_naming_its_targets_needs_no_label_and_end_is_drawn():
    builder = chain("a")
    builder.add_conditional_edges("a", lambda s: END, {"a": "a", END: END})
    assert edges(builder.compile().get_graph()) == [
        ("__start__", "a", None, False),
        ("a", "__end__", None, True),
        ("a", "a", None, True),
    ]


def test_literal_return_annotation_names_the_targets():
    def route(state: State) -> Literal["b", "__end__"]:
        return "b"

    builder = chain("a")
    builder.add_node("b", noop)
    builder.add_conditional_edges("a", route)
    assert ("a", "b", None, True) in edges(builder.compile().get_graph())
    assert ("a", "__end__", None, True) in edges(builder.compile().get_graph())


def test_router_without_known_targets_ends_the_drawing_there():
    builder = chain("a")
    builder.add_node("b", noop)
    builder.add_conditional_edges("a", lambda s: "b")
    assert edges(builder.compile().get_graph()) == [
        ("__start__", "a", None, False),
        ("a", "__end__", None, False),
    ]


def test_command_destinations_are_conditional_edges():
    assert edges(command_graph().compile().get_graph()) == [
        ("__start__", "router", None, False),
        ("router", "left", None, True),
        ("router", "right", None, True),
        ("left", "__end__", None, False),
        ("right", "__end__", None, False),
    ]


def test_destinations_dict_labels_the_edges():
    builder = StateGraph(State)
    builder.add_node("a", noop, destinations={"b": "when ready", "c": ""})
    builder.add_node("b", noop)
    builder.add_node("c", noop)
    builder.add_edge(START, "a")
    assert edges(builder.compile().get_graph())[1:3] == [
        ("a", "b", "when ready", True),
        ("a", "c", "", True),
    ]


def test_plain_literal_return_of_a_node_is_not_a_route():
    def node(state: State) -> Literal["x"]:
        return "x"

    builder = StateGraph(State)
    builder.add_node("a", node)
    builder.add_edge(START, "a")
    assert edges(builder.compile().get_graph())[-1] == ("a", "__end__", None, False)


def test_barrier_edges_are_drawn_once_every_source_ran():
    builder = chain("a", "b")
    builder.add_node("c", noop)
    builder.add_node("join", noop)
    builder.add_edge(START, "c")
    builder.add_edge(["b", "c"], "join")
    assert edges(builder.compile().get_graph()) == [
        ("__start__", "a", None, False),
        ("__start__", "c", None, False),
        ("a", "b", None, False),
        ("b", "join", None, False),
        ("c", "join", None, False),
        ("join", "__end__", None, False),
    ]


def test_barrier_that_never_fills_is_not_drawn():
    builder = chain("a", "b")
    builder.add_node("never", noop)
    builder.add_node("join", noop)
    builder.add_edge(["b", "never"], "join")
    assert edges(builder.compile().get_graph())[-1] == ("b", "__end__", None, False)


def test_unreachable_nodes_are_listed_without_edges():
    builder = chain("a")
    builder.add_node("island", noop)
    builder.add_node("other", noop)
    builder.add_edge("island", "other")
    g = builder.compile().get_graph()
    assert "island" in g.nodes
    assert all("island" not in (e.source, e.target) for e in g.edges)


def test_endless_loop_gets_a_dotted_exit():
    two = chain("human", "agent")
    two.add_edge("agent", "human")
    assert edges(two.compile().get_graph())[-1] == ("agent", "__end__", None, True)
    # the exit is drawn from the node that would run at step 250 of the loop
    three = chain("a", "b", "c")
    three.add_edge("c", "a")
    assert edges(three.compile().get_graph())[-1] == ("a", "__end__", None, True)
    five = chain("a", "b", "c", "d", "e")
    five.add_edge("e", "a")
    assert edges(five.compile().get_graph())[-1] == ("e", "__end__", None, True)


def test_loop_running_two_nodes_at_a_time_has_no_drawn_exit():
    builder = StateGraph(State)
    for n in ("a", "b", "c"):
        builder.add_node(n, noop)
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    builder.add_edge("a", "c")
    builder.add_edge("c", "a")
    builder.add_edge("b", "b")
    assert all(e.target != END for e in builder.compile().get_graph().edges)


def test_interrupt_and_defer_metadata():
    builder = chain("a", "b")
    builder.add_node("c", noop, defer=True, metadata={"team": "ops"})
    builder.add_edge("b", "c")
    g = builder.compile(interrupt_before=["a", "b"], interrupt_after=["a"]).get_graph()
    assert g.nodes["a"].metadata == {"__interrupt": "before,after"}
    assert g.nodes["b"].metadata == {"__interrupt": "before"}
    assert g.nodes["c"].metadata == {"team": "ops", "defer": True}
    assert g.nodes["__start__"].metadata is None


def test_to_json_reports_langgraph_node_kinds():
    js = nested_graph().compile().get_graph().to_json()
    kinds = {n["id"]: n.get("data", {}).get("id") for n in js["nodes"]}
    assert kinds["prepare"] == ["langgraph", "_internal", "_runnable", "RunnableCallable"]
    assert kinds["inner"] == ["langgraph", "graph", "state", "CompiledStateGraph"]
    assert kinds["__end__"] is None


def test_xray_draws_subgraphs_inside_their_node():
    graph = nested_graph().compile()
    plain = graph.get_graph()
    assert "inner" in plain.nodes
    g = graph.get_graph(xray=True)
    assert list(g.nodes) == [
        "__start__",
        "prepare",
        "finish",
        "__end__",
        "inner:__start__",
        "inner:think",
        "inner:check",
        "inner:__end__",
    ]
    # the subgraph's START stays: without it no node would be first (think is looped into)
    assert edges(g) == [
        ("__start__", "prepare", None, False),
        ("inner:__end__", "finish", None, False),
        ("prepare", "inner:__start__", None, False),
        ("finish", "__end__", None, False),
        ("inner:__start__", "inner:think", None, False),
        ("inner:check", "inner:__end__", "done", True),
        ("inner:check", "inner:think", "again", True),
        ("inner:think", "inner:check", None, False),
    ]
    # the to_json name of a drawn subgraph node is its prefixed id
    names = [n["data"]["name"] for n in g.to_json()["nodes"] if "data" in n]
    assert "inner:think" in names


def test_xray_depth_limits_how_deep_subgraphs_open():
    inner = nested_graph().compile()
    outer = StateGraph(State)
    outer.add_node("wrap", inner)
    outer.add_edge(START, "wrap")
    graph = outer.compile()
    one = graph.get_graph(xray=1)
    assert "wrap:inner" in one.nodes and "wrap:inner:think" not in one.nodes
    full = graph.get_graph(xray=True)
    assert "wrap:inner:think" in full.nodes
    assert graph.get_graph(xray=0).nodes.keys() == {"__start__", "wrap", "__end__"}
    assert "\tsubgraph wrap\n" in full.draw_mermaid()
    assert "\tsubgraph inner\n" in full.draw_mermaid()


def test_xray_opens_a_graph_called_inside_a_node_function():
    sub = chain("p", "q").compile()

    def caller(state: State) -> dict:
        return sub.invoke(state)

    builder = StateGraph(State)
    builder.add_node("call", caller)
    builder.add_edge(START, "call")
    g = builder.compile().get_graph(xray=True)
    assert edges(g) == [
        ("__start__", "call:p", None, False),
        ("call:q", "__end__", None, False),
        ("call:p", "call:q", None, False),
    ]


def test_low_level_pregel_edges_follow_channels():
    one = NodeBuilder().subscribe_only("a").do(lambda x: x).write_to("b")
    two = NodeBuilder().subscribe_only("b").do(lambda x: x).write_to("c")
    app = Pregel(
        nodes={"one": one, "two": two},
        channels={"a": LastValue(int), "b": LastValue(int), "c": LastValue(int)},
        input_channels="a",
        output_channels="c",
    )
    g = app.get_graph()
    assert list(g.nodes) == ["one", "two", "__start__", "__end__"]
    assert edges(g) == [
        ("__start__", "one", None, False),
        ("one", "two", None, False),
        ("two", "__end__", None, False),
    ]
    assert g.first_node().id == "__start__"


def test_drawing_does_not_need_a_run_or_a_saver():
    graph = review_graph().compile(checkpointer=InMemorySaver())
    assert graph.get_graph().last_node().id == "__end__"
    assert Edge("draft", "review") in graph.get_graph().edges


def test_xray_does_not_open_a_graph_inside_itself():
    builder = chain("a", "b")
    graph = builder.compile()
    # a node that refers to its own graph (or an ancestor) is drawn as a plain node
    graph.nodes["b"].subgraphs = [graph]
    drawn = graph.get_graph(xray=True)
    assert list(drawn.nodes) == ["__start__", "a", "b", "__end__"]
