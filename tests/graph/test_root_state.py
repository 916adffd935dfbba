"""Graphs whose whole state is one bare value: ``StateGraph(int)``,
``StateGraph(Annotated[list, operator.add])``, ``StateGraph(dict)``. Nodes receive the
value and return the new one (or ``None`` for no change). Expected values were checked
against LangGraph 1.2 as a black box."""

from __future__ import annotations

import operator
from typing import Annotated, Any

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import END, START, StateGraph
from stategraph.types import Command


def _log_graph() -> Any:
    builder = StateGraph(Annotated[list, operator.add])
    builder.add_node("first", lambda items: ["first"])
    builder.add_node("quiet", lambda items: None)
    builder.add_node("last", lambda items: Command(update=["last"], goto=END))
    builder.add_edge(START, "first")
    builder.add_conditional_edges("first", lambda items: "quiet" if len(items) < 3 else END)
    builder.add_edge("quiet", "last")
    return builder.compile(checkpointer=InMemorySaver())


def test_reducer_value_state_runs_and_routes_on_the_value() -> None:
    graph = _log_graph()
    config = {"configurable": {"thread_id": "a"}}
    assert graph.invoke(["start"], config) == ["start", "first", "last"]
    assert graph.get_state(config).values == ["start", "first", "last"]
    # a longer input makes the conditional edge end the run after "first"
    other = {"configurable": {"thread_id": "b"}}
    assert graph.invoke(["x", "y"], other) == ["x", "y", "first"]


def test_stream_shows_the_value_itself() -> None:
    graph = _log_graph()
    chunks = list(
        graph.stream(["s"], {"configurable": {"thread_id": "c"}}, stream_mode=["updates", "values"])
    )
    assert chunks == [
        ("values", ["s"]),
        ("updates", {"first": ["first"]}),
        ("values", ["s", "first"]),
        ("updates", {"quiet": None}),
        ("updates", {"last": ["last"]}),
        ("values", ["s", "first", "last"]),
    ]


def test_update_state_writes_the_value_through_the_reducer() -> None:
    graph = _log_graph()
    config = {"configurable": {"thread_id": "d"}}
    graph.invoke(["s"], config)
    graph.update_state(config, ["manual"], as_node="quiet")
    assert graph.get_state(config).values == ["s", "first", "last", "manual"]


def test_plain_value_state_is_replaced_by_each_node() -> None:
    builder = StateGraph(int)
    builder.add_node("double", lambda n: n * 2)
    builder.add_node("inc", lambda n: n + 1)
    builder.add_edge(START, "double")
    builder.add_edge("double", "inc")
    graph = builder.compile()
    assert graph.invoke(5) == 11
    assert (graph.input_channels, graph.output_channels) == ("__start__", "__root__")
    assert graph.get_input_jsonschema() == {
        "title": "LangGraphInput",
        "type": "integer",
        "default": None,
    }


def test_dict_state_is_one_value_too() -> None:
    builder = StateGraph(dict)
    builder.add_node("replace", lambda d: {"seen": sorted(d)})
    builder.add_edge(START, "replace")
    assert builder.compile().invoke({"b": 1, "a": 2}) == {"seen": ["a", "b"]}


def test_a_list_with_commands_is_a_list_of_updates() -> None:
    builder = StateGraph(Annotated[list, operator.add])
    builder.add_node("two", lambda items: [Command(update=["x"]), ["y"]])
    builder.add_edge(START, "two")
    assert builder.compile().invoke([]) == ["x", "y"]

    text = StateGraph(Annotated[str, operator.add])
    text.add_node("parts", lambda s: [Command(update="a1"), Command(update="a2")])
    text.add_edge(START, "parts")
    assert text.compile().invoke("") == "a1a2"


def test_task_results_of_a_bare_value_state_are_the_values() -> None:
    graph = _log_graph()
    config = {"configurable": {"thread_id": "r"}}
    graph.invoke(["s"], config)
    history = list(graph.get_state_history(config))
    first = history[-1]  # the input checkpoint: its __start__ task wrote the input
    assert [(t.name, t.result) for t in first.tasks] == [("__start__", ["s"])]
    assert [(t.name, t.result) for t in history[-2].tasks] == [("first", ["first"])]


def test_updates_stream_of_several_root_writes_lists_them() -> None:
    text = StateGraph(Annotated[str, operator.add])
    text.add_node("parts", lambda s: [Command(update="a1"), Command(update="a2")])
    text.add_node("tail", lambda s: "b")
    text.add_edge(START, "parts")
    text.add_edge("parts", "tail")
    graph = text.compile()
    assert list(graph.stream("", stream_mode="updates")) == [
        {"parts": ["a1", "a2"]},
        {"tail": "b"},
    ]
