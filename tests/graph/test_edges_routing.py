"""Static edges, barriers, conditional edges, entry/finish points and drawing."""

import operator
from typing import Annotated, Any, Literal

import pytest
from typing_extensions import TypedDict

from stategraph.errors import GraphRecursionError, InvalidUpdateError
from stategraph.graph import END, START, StateGraph

from .helpers import assert_steps


class State(TypedDict):
    n: int
    log: Annotated[list, operator.add]


def node(name: str) -> Any:
    def f(state):
        return {"log": [name]}

    f.__name__ = name
    return f


# --------------------------------------------------------------------------- static edges


def test_fan_out_runs_branches_in_the_same_step(run):
    builder = StateGraph(State)
    for name in ("a", "b", "c"):
        builder.add_node(name, node(name))
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("a", "c")
    graph = builder.compile()
    assert run.invoke(graph, {"n": 0}) == {"n": 0, "log": ["a", "b", "c"]}
    chunks = run.stream(graph, {"n": 0}, stream_mode="updates")
    assert_steps(chunks, [[{"a": {"log": ["a"]}}], [{"b": {"log": ["b"]}}, {"c": {"log": ["c"]}}]])


def test_parallel_writes_to_plain_key_conflict(run):
    builder = StateGraph(State)
    builder.add_node("a", lambda s: {"n": 1})
    builder.add_node("b", lambda s: {"n": 2})
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    with pytest.raises(InvalidUpdateError, match="'n'"):
        run.invoke(builder.compile(), {"n": 0})


def _uneven(barrier: bool, defer: bool = False) -> Any:
    builder = StateGraph(State)
    for name in ("a", "a2", "a3", "b"):
        builder.add_node(name, node(name))
    builder.add_node("c", node("c"), defer=defer)
    builder.add_edge(START, "a")
    builder.add_edge("a", "a2")
    builder.add_edge("a2", "a3")
    builder.add_edge(START, "b")
    if barrier:
        builder.add_edge(["a3", "b"], "c")
    else:
        builder.add_edge("a3", "c")
        builder.add_edge("b", "c")
    return builder.compile()


def test_barrier_waits_for_branches_of_different_lengths(run):
    graph = _uneven(barrier=True)
    assert run.invoke(graph, {"n": 0}) == {"n": 0, "log": ["a", "b", "a2", "a3", "c"]}
    chunks = run.stream(graph, {"n": 0}, stream_mode="updates")
    assert_steps(
        chunks,
        [
            [{"a": {"log": ["a"]}}, {"b": {"log": ["b"]}}],
            [{"a2": {"log": ["a2"]}}],
            [{"a3": {"log": ["a3"]}}],
            [{"c": {"log": ["c"]}}],
        ],
    )


def test_barrier_edges_are_drawn():
    mermaid = _uneven(barrier=True).get_graph().draw_mermaid()
    for edge in ("a3 --> c;", "b --> c;", "a --> a2;", "__start__ --> b;"):
        assert edge in mermaid


def test_separate_edges_do_not_wait(run):
    # without the barrier the short branch triggers c early, and c runs twice
    graph = _uneven(barrier=False)
    assert run.invoke(graph, {"n": 0}) == {"n": 0, "log": ["a", "b", "a2", "c", "a3", "c"]}


def test_barrier_resets_between_loop_iterations(run):
    def route(state):
        return "loop" if state["n"] < 2 else END

    def bump(state):
        return {"n": state["n"] + 1, "log": ["join"]}

    builder = StateGraph(State)
    builder.add_node("loop", node("loop"))
    builder.add_node("x", node("x"))
    builder.add_node("y1", node("y1"))
    builder.add_node("y2", node("y2"))
    builder.add_node("join", bump)
    builder.add_edge(START, "loop")
    builder.add_edge("loop", "x")
    builder.add_edge("loop", "y1")
    builder.add_edge("y1", "y2")
    builder.add_edge(["x", "y2"], "join")
    builder.add_conditional_edges("join", route)
    result = run.invoke(builder.compile(), {"n": 0})
    one_round = ["loop", "x", "y1", "y2", "join"]
    assert result == {"n": 2, "log": one_round * 2}


def test_barrier_never_fires_if_a_source_never_runs(run):
    builder = StateGraph(State)
    builder.add_node("a", node("a"))
    builder.add_node("b", node("b"))
    builder.add_node("c", node("c"))
    builder.add_edge(START, "a")
    builder.add_edge(["a", "b"], "c")
    assert run.invoke(builder.compile(), {"n": 0}) == {"n": 0, "log": ["a"]}


def test_recursion_limit_on_unbounded_loop(run):
    builder = StateGraph(State)
    builder.add_node("loop", lambda s: {"n": s["n"] + 1})
    builder.add_edge(START, "loop")
    builder.add_edge("loop", "loop")
    with pytest.raises(GraphRecursionError, match="3"):
        run.invoke(builder.compile(), {"n": 0}, {"recursion_limit": 3})


# --------------------------------------------------------------------------- helpers


def test_add_sequence_and_entry_finish_points(run):
    builder = StateGraph(State)
    builder.add_sequence([node("one"), node("two"), ("three", node("x3"))])
    builder.set_entry_point("one")
    builder.set_finish_point("three")
    assert list(builder.nodes) == ["one", "two", "three"]
    assert builder.edges == {("one", "two"), ("two", "three"), (START, "one"), ("three", END)}
    assert run.invoke(builder.compile(), {"n": 0}) == {"n": 0, "log": ["one", "two", "x3"]}


def test_add_sequence_empty_is_an_error():
    with pytest.raises(ValueError):
        StateGraph(State).add_sequence([])


# --------------------------------------------------------------------------- conditional edges


def route_by_size(state) -> Literal["big", "small", "__end__"]:
    if state["n"] < 0:
        return END
    return "big" if state["n"] > 10 else "small"


def _sized_graph() -> Any:
    builder = StateGraph(State)
    for name in ("start", "big", "small"):
        builder.add_node(name, node(name))
    builder.set_entry_point("start")
    builder.add_conditional_edges("start", route_by_size)
    builder.set_finish_point("big")
    builder.set_finish_point("small")
    return builder.compile()


@pytest.mark.parametrize(
    ("n", "log"), [(20, ["start", "big"]), (1, ["start", "small"]), (-1, ["start"])]
)
def test_conditional_edge_returns_name_or_end(run, n, log):
    assert run.invoke(_sized_graph(), {"n": n}) == {"n": n, "log": log}


def test_literal_return_annotation_gives_drawn_targets():
    mermaid = _sized_graph().get_graph().draw_mermaid()
    for edge in (
        "__start__ --> start;",
        "start -.-> big;",
        "start -.-> small;",
        "start -.-> __end__;",
        "big --> __end__;",
        "small --> __end__;",
    ):
        assert edge in mermaid


def route_with_config(state, config):
    return ["p", "q"] if config["configurable"].get("both") else "lab_p"


def _mapped_graph() -> Any:
    builder = StateGraph(State)
    builder.add_node("p", node("p"))
    builder.add_node("q", node("q"))
    builder.set_conditional_entry_point(route_with_config, {"p": "p", "q": "q", "lab_p": "p"})
    return builder.compile()


def test_path_returning_list_and_dict_path_map(run):
    graph = _mapped_graph()
    both = run.invoke(graph, {"n": 0}, {"configurable": {"both": True}})
    assert both == {"n": 0, "log": ["p", "q"]}
    assert run.invoke(graph, {"n": 0}) == {"n": 0, "log": ["p"]}


def test_path_map_labels_are_drawn():
    mermaid = _mapped_graph().get_graph().draw_mermaid()
    assert "__start__ -.-> q;" in mermaid
    labelled = [line for line in mermaid.splitlines() if "lab_p" in line]
    assert len(labelled) == 1
    assert labelled[0].strip().startswith("__start__")
    assert labelled[0].strip().endswith("p;")


def test_path_map_as_list(run):
    builder = StateGraph(State)
    builder.add_node("p", node("p"))
    builder.add_node("q", node("q"))
    builder.add_conditional_edges(START, lambda s: "q" if s["n"] else "p", ["p", "q"])
    graph = builder.compile()
    assert run.invoke(graph, {"n": 1}) == {"n": 1, "log": ["q"]}
    assert run.invoke(graph, {"n": 0}) == {"n": 0, "log": ["p"]}
    mermaid = graph.get_graph().draw_mermaid()
    assert "__start__ -.-> p;" in mermaid
    assert "__start__ -.-> q;" in mermaid


def test_path_map_to_end(run):
    builder = StateGraph(State)
    builder.add_node("p", node("p"))
    builder.add_edge(START, "p")
    builder.add_conditional_edges("p", lambda s: "stop", {"stop": END, "again": "p"})
    assert run.invoke(builder.compile(), {"n": 0}) == {"n": 0, "log": ["p"]}


def test_conditional_edge_sees_the_source_nodes_update(run):
    seen: list[Any] = []

    def route(state):
        seen.append(state["n"])
        return END

    builder = StateGraph(State)
    builder.add_node("p", lambda s: {"n": s["n"] + 5})
    builder.add_edge(START, "p")
    builder.add_conditional_edges("p", route)
    run.invoke(builder.compile(), {"n": 1})
    assert seen == [6]


def to_x(state):
    return "x"


def to_y(state):
    return "y"


def test_two_conditional_edges_from_one_node(run):
    builder = StateGraph(State)
    for name in ("s", "x", "y"):
        builder.add_node(name, node(name))
    builder.add_edge(START, "s")
    builder.add_conditional_edges("s", to_x)
    builder.add_conditional_edges("s", to_y)
    assert run.invoke(builder.compile(), {"n": 0}) == {"n": 0, "log": ["s", "x", "y"]}


def test_path_returning_value_outside_path_map(run):
    builder = StateGraph(State)
    builder.add_node("p", node("p"))
    builder.add_conditional_edges(START, lambda s: "zz", ["p"])
    with pytest.raises(InvalidUpdateError, match="'zz'"):
        run.invoke(builder.compile(), {"n": 0})


def test_path_returning_unknown_node(run):
    builder = StateGraph(State)
    builder.add_node("p", node("p"))
    builder.add_conditional_edges(START, lambda s: "ghost")
    with pytest.raises(InvalidUpdateError, match="'ghost'"):
        run.invoke(builder.compile(), {"n": 0})


def test_loop_with_conditional_exit(run):
    def inc(state):
        return {"n": state["n"] + 1, "log": [state["n"]]}

    builder = StateGraph(State)
    builder.add_node("inc", inc)
    builder.add_edge(START, "inc")
    builder.add_conditional_edges("inc", lambda s: "inc" if s["n"] < 4 else END)
    assert run.invoke(builder.compile(), {"n": 0}) == {"n": 4, "log": [0, 1, 2, 3]}


async def async_route(state):
    return "p" if state["n"] else "q"


async def test_async_path_function_under_ainvoke():
    builder = StateGraph(State)
    builder.add_node("p", node("p"))
    builder.add_node("q", node("q"))
    builder.add_conditional_edges(START, async_route, ["p", "q"])
    graph = builder.compile()
    assert await graph.ainvoke({"n": 1}) == {"n": 1, "log": ["p"]}
    assert await graph.ainvoke({"n": 0}) == {"n": 0, "log": ["q"]}


class _Wide(TypedDict):
    total: Annotated[int, operator.add]
    label: str


class _RouteView(TypedDict):
    mood: str


class _SecondView(TypedDict):
    total: Annotated[int, operator.add]
    mood: str


def test_routing_function_reads_only_its_annotated_schema() -> None:
    seen: list[Any] = []

    def first(state: _Wide) -> dict[str, Any]:
        return {"total": 1, "mood": "happy"}

    def second(state: _SecondView) -> dict[str, Any]:
        return {"total": 1, "label": state["mood"]}

    def route(state: _RouteView) -> str:
        seen.append(dict(state))
        return "second" if state["mood"] == "happy" else END

    builder = StateGraph(_Wide)
    builder.add_node("first", first)
    builder.add_node("second", second)
    builder.add_edge(START, "first")
    builder.add_conditional_edges("first", route)
    assert builder.compile().invoke({"total": 0}) == {"total": 2, "label": "happy"}
    assert seen == [{"mood": "happy"}]
