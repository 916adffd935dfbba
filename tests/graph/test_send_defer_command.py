"""``Send`` fan-out, deferred nodes and ``Command`` routing."""

import operator
from typing import Annotated, Any, Literal

import pytest
from typing_extensions import TypedDict

from stategraph.errors import InvalidUpdateError
from stategraph.graph import END, START, StateGraph
from stategraph.types import Command, Send

from .helpers import assert_steps

# the same assertions on threads, a local Ray and a local Dask cluster
pytestmark = pytest.mark.executors


class State(TypedDict):
    log: Annotated[list, operator.add]


def node(name: str) -> Any:
    def f(state):
        return {"log": [name]}

    f.__name__ = name
    return f


# --------------------------------------------------------------------------- Send


class Work(TypedDict):
    items: list
    results: Annotated[list, operator.add]


class Job(TypedDict):
    item: int


def _fan_graph(seen: list[Any] | None = None) -> Any:
    def fan(state):
        return [Send("work", {"item": i}) for i in state["items"]]

    def work(state: Job):
        if seen is not None:
            seen.append(state)
        return {"results": [state["item"] * 10]}

    builder = StateGraph(Work)
    builder.add_node("work", work)
    builder.add_node("total", lambda s: {"results": [sum(s["results"])]})
    builder.add_conditional_edges(START, fan, ["work"])
    builder.add_edge("work", "total")
    return builder.compile()


def test_send_one_task_per_packet_with_packet_as_input(run):
    seen: list[Any] = run.log()
    graph = _fan_graph(seen)
    assert run.invoke(graph, {"items": [1, 2, 3]}) == {
        "items": [1, 2, 3],
        "results": [10, 20, 30, 60],
    }
    # the packets run as parallel tasks: the order they start in is not defined
    assert sorted(seen, key=lambda packet: packet["item"]) == [
        {"item": 1},
        {"item": 2},
        {"item": 3},
    ]


def test_send_updates_stream_one_chunk_per_task(run):
    chunks = run.stream(_fan_graph(), {"items": [1, 2, 3]}, stream_mode="updates")
    assert_steps(
        chunks,
        [
            [{"work": {"results": [10]}}, {"work": {"results": [20]}}, {"work": {"results": [30]}}],
            [{"total": {"results": [60]}}],
        ],
    )


def test_send_with_no_packets_runs_nothing(run):
    assert run.invoke(_fan_graph(), {"items": []}) == {"items": [], "results": []}


def test_send_same_packet_twice_runs_twice(run):
    assert run.invoke(_fan_graph(), {"items": [2, 2]}) == {"items": [2, 2], "results": [20, 20, 40]}


def test_send_single_packet_not_in_a_list(run):
    builder = StateGraph(Work)
    builder.add_node("work", lambda s: {"results": [s["item"] + 1]})
    builder.add_conditional_edges(START, lambda s: Send("work", {"item": s["items"][0]}))
    assert run.invoke(builder.compile(), {"items": [41]}) == {"items": [41], "results": [42]}


def test_send_mixed_with_node_names(run):
    def fan(state):
        return [Send("work", {"item": 5}), "plain"]

    builder = StateGraph(Work)
    builder.add_node("work", lambda s: {"results": [s["item"]]})
    builder.add_node("plain", lambda s: {"results": [len(s["items"])]})
    builder.add_conditional_edges(START, fan)
    result = run.invoke(builder.compile(), {"items": [0, 0]})
    assert result == {"items": [0, 0], "results": [2, 5]}


def test_send_to_unknown_node(run):
    builder = StateGraph(Work)
    builder.add_node("work", lambda s: None)
    builder.add_conditional_edges(START, lambda s: [Send("nowhere", {})])
    with pytest.raises(InvalidUpdateError, match="'nowhere'"):
        run.invoke(builder.compile(), {"items": []})


def test_send_from_a_node_branch_in_a_loop(run):
    def plan(state):
        return {"results": [f"plan{len(state['results'])}"]}

    def fan(state):
        if len(state["results"]) > 3:
            return END
        return [Send("work", {"item": i}) for i in state["items"]]

    builder = StateGraph(Work)
    builder.add_node("plan", plan)
    builder.add_node("work", lambda s: {"results": [s["item"]]})
    builder.add_edge(START, "plan")
    builder.add_conditional_edges("plan", fan)
    builder.add_edge("work", "plan")
    result = run.invoke(builder.compile(), {"items": [7, 8]})
    assert result == {"items": [7, 8], "results": ["plan0", 7, 8, "plan3"]}


# --------------------------------------------------------------------------- Command


def cmd_to_x(state) -> Command[Literal["x", "y"]]:
    return Command(update={"log": ["cmd"]}, goto="x")


def _cmd_static_graph() -> Any:
    builder = StateGraph(State)
    builder.add_node("cmd", cmd_to_x)
    for name in ("x", "y", "z"):
        builder.add_node(name, node(name))
    builder.add_edge(START, "cmd")
    builder.add_edge("cmd", "z")
    return builder.compile()


def test_command_goto_keeps_static_edges(run):
    graph = _cmd_static_graph()
    assert run.invoke(graph, {"log": []}) == {"log": ["cmd", "x", "z"]}
    chunks = run.stream(graph, {"log": []}, stream_mode="updates")
    assert_steps(
        chunks, [[{"cmd": {"log": ["cmd"]}}], [{"x": {"log": ["x"]}}, {"z": {"log": ["z"]}}]]
    )


def test_command_literal_annotation_is_drawn():
    mermaid = _cmd_static_graph().get_graph().draw_mermaid()
    for edge in ("__start__ --> cmd;", "cmd -.-> x;", "cmd -.-> y;", "cmd --> z;"):
        assert edge in mermaid


def goto_many(state):
    return Command(update={"log": ["cmd"]}, goto=[Send("x", {"log": ["sent"]}), "y", END])


def test_command_goto_list_with_send_name_and_end(run):
    seen: list[Any] = run.log()

    def x(state):
        seen.append(state)
        return {"log": ["x"]}

    builder = StateGraph(State)
    builder.add_node("cmd", goto_many, destinations=("x", "y"))
    builder.add_node("x", x)
    builder.add_node("y", node("y"))
    builder.add_edge(START, "cmd")
    graph = builder.compile()
    assert run.invoke(graph, {"log": []}) == {"log": ["cmd", "y", "x"]}
    assert seen == [{"log": ["sent"]}]
    mermaid = graph.get_graph().draw_mermaid()
    assert "cmd -.-> x;" in mermaid
    assert "cmd -.-> y;" in mermaid


def test_destinations_dict_labels_are_drawn():
    builder = StateGraph(State)
    builder.add_node("cmd", lambda s: Command(goto="x"), destinations={"x": "to x", "y": "to y"})
    builder.add_node("x", node("x"))
    builder.add_node("y", node("y"))
    builder.add_edge(START, "cmd")
    mermaid = builder.compile().get_graph().draw_mermaid()
    lines = [line.strip() for line in mermaid.splitlines()]
    assert any(line.startswith("cmd -.") and line.endswith("x;") for line in lines)
    assert any(line.startswith("cmd -.") and line.endswith("y;") for line in lines)
    # the values of a destinations dict are edge labels
    assert "to x" in mermaid
    assert "to y" in mermaid


def test_command_goto_end_only_updates(run):
    builder = StateGraph(State)
    builder.add_node("cmd", lambda s: Command(update={"log": ["only"]}, goto=END))
    builder.add_edge(START, "cmd")
    assert run.invoke(builder.compile(), {"log": []}) == {"log": ["only"]}


def test_command_goto_send_object(run):
    builder = StateGraph(State)
    builder.add_node("cmd", lambda s: Command(goto=Send("x", {"log": ["payload"]})))
    builder.add_node("x", lambda s: {"log": [f"x saw {s['log']}"]})
    builder.add_edge(START, "cmd")
    result = run.invoke(builder.compile(), {"log": ["in"]})
    assert result == {"log": ["in", "x saw ['payload']"]}


def test_command_goto_loop_until_done(run):
    def step(state) -> Command[Literal["step", "__end__"]]:
        count = len(state["log"])
        return Command(update={"log": [count]}, goto="step" if count < 3 else END)

    builder = StateGraph(State)
    builder.add_node("step", step)
    builder.add_edge(START, "step")
    assert run.invoke(builder.compile(), {"log": []}) == {"log": [0, 1, 2, 3]}


def test_command_goto_unknown_node(run):
    builder = StateGraph(State)
    builder.add_node("cmd", lambda s: Command(goto="ghost"))
    builder.add_edge(START, "cmd")
    with pytest.raises(InvalidUpdateError, match="'ghost'"):
        run.invoke(builder.compile(), {"log": []})


# --------------------------------------------------------------------------- defer


def _fan_out(defer: bool) -> Any:
    builder = StateGraph(State)
    for name in ("a", "a2", "a3", "b"):
        builder.add_node(name, node(name))
    builder.add_node("final", node("final"), defer=defer)
    builder.add_edge(START, "a")
    builder.add_edge("a", "a2")
    builder.add_edge("a2", "a3")
    builder.add_edge("a3", "final")
    builder.add_edge(START, "b")
    builder.add_edge("b", "final")
    return builder.compile()


def test_deferred_node_runs_once_when_nothing_else_is_left(run):
    # exact values observed with LangGraph 1.2 on the same graph
    graph = _fan_out(defer=True)
    assert run.invoke(graph, {"log": []}) == {"log": ["a", "b", "a2", "a3", "final"]}
    chunks = run.stream(graph, {"log": []}, stream_mode="updates")
    assert_steps(
        chunks,
        [
            [{"a": {"log": ["a"]}}, {"b": {"log": ["b"]}}],
            [{"a2": {"log": ["a2"]}}],
            [{"a3": {"log": ["a3"]}}],
            [{"final": {"log": ["final"]}}],
        ],
    )


def test_same_fan_out_without_defer_runs_final_twice(run):
    graph = _fan_out(defer=False)
    assert run.invoke(graph, {"log": []}) == {"log": ["a", "b", "a2", "final", "a3", "final"]}


def test_deferred_node_after_send_fan_out(run):
    def fan(state):
        return [Send("work", {"item": i}) for i in state["items"]]

    def work(state: Job):
        return {"results": [state["item"]]}

    def chain(state):
        return {"results": ["chain"]}

    def summary(state):
        return {"results": [f"summary:{len(state['results'])}"]}

    builder = StateGraph(Work)
    builder.add_node("work", work)
    builder.add_node("chain", chain)
    builder.add_node("chain2", chain)
    builder.add_node("summary", summary, defer=True)
    builder.add_conditional_edges(START, fan)
    builder.add_edge(START, "chain")
    builder.add_edge("chain", "chain2")
    builder.add_edge("work", "summary")
    builder.add_edge("chain2", "summary")
    result = run.invoke(builder.compile(), {"items": [1, 2]})
    assert result == {"items": [1, 2], "results": ["chain", 1, 2, "chain", "summary:4"]}


def test_async_router_under_sync_invoke_fails_cleanly():
    """The routing function is not even called, so no coroutine is left un-awaited."""
    import gc
    import warnings

    calls: list[str] = []

    async def route(state: Work) -> str:
        calls.append("route")
        return END

    builder = StateGraph(Work)
    builder.add_node("work", lambda s: {"results": [1]})
    builder.add_edge(START, "work")
    builder.add_conditional_edges("work", route)
    graph = builder.compile()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(TypeError, match="async routing function; run the graph with ainvoke"):
            graph.invoke({"items": []})
        gc.collect()
    assert calls == []
    assert not [w for w in caught if "never awaited" in str(w.message)]
