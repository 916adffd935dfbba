"""Static breakpoints: interrupt_before / interrupt_after, at compile time and per run.

Expected values (results, ``next``, history shapes) were taken from LangGraph 1.x run as
a black box on the same graphs.
"""

from __future__ import annotations

from typing import Any

import pytest
from typing_extensions import TypedDict

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import START, StateGraph

from ._support import Runner, cfg, shape


class Text(TypedDict, total=False):
    log: str


def abc(calls: list[str]) -> StateGraph:
    """START -> a -> b -> c, each node appends its name to ``log``."""

    def make(name: str) -> Any:
        def node(state: Text) -> dict[str, str]:
            calls.append(name)
            return {"log": state.get("log", "") + name}

        return node

    builder = StateGraph(Text)
    for name in "abc":
        builder.add_node(name, make(name))
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("b", "c")
    return builder


FULL_HISTORY = [
    ("loop", 3, ()),
    ("loop", 2, ("c",)),
    ("loop", 1, ("b",)),
    ("loop", 0, ("a",)),
    ("input", -1, ("__start__",)),
]


@pytest.mark.parametrize(
    ("compile_kw", "run_kw"),
    [
        ({"interrupt_before": ["b"]}, {}),
        ({"interrupt_after": ["a"]}, {}),
        ({}, {"interrupt_before": ["b"]}),
        ({}, {"interrupt_after": ["a"]}),
    ],
    ids=["compile-before-b", "compile-after-a", "run-before-b", "run-after-a"],
)
def test_breakpoint_pauses_and_none_continues(
    runner: Runner, compile_kw: dict[str, Any], run_kw: dict[str, Any]
) -> None:
    calls: list[str] = []
    graph = abc(calls).compile(checkpointer=InMemorySaver(), **compile_kw)
    config = cfg("bp")
    paused = runner.invoke(graph, {"log": ""}, config, **run_kw)
    assert paused == {"log": "a"}
    assert calls == ["a"]
    snapshot = runner.get_state(graph, config)
    assert snapshot.next == ("b",)
    assert [t.name for t in snapshot.tasks] == ["b"]
    assert snapshot.tasks[0].interrupts == ()
    assert snapshot.interrupts == ()
    assert snapshot.values == {"log": "a"}

    calls.clear()
    resumed = runner.invoke(graph, None, config, **run_kw)
    assert resumed == {"log": "abc"}
    assert calls == ["b", "c"]
    assert runner.get_state(graph, config).next == ()

    calls.clear()
    assert runner.invoke(graph, None, config, **run_kw) == {"log": "abc"}
    assert calls == []
    assert shape(runner.history(graph, config)) == FULL_HISTORY


def test_run_breakpoint_before_c(runner: Runner) -> None:
    calls: list[str] = []
    graph = abc(calls).compile(checkpointer=InMemorySaver())
    config = cfg("run-before-c")
    assert runner.invoke(graph, {"log": ""}, config, interrupt_before=["c"]) == {"log": "ab"}
    assert runner.get_state(graph, config).next == ("c",)
    calls.clear()
    assert runner.invoke(graph, None, config, interrupt_before=["c"]) == {"log": "abc"}
    assert calls == ["c"]
    assert shape(runner.history(graph, config)) == FULL_HISTORY


def test_run_breakpoint_applies_only_to_that_run(runner: Runner) -> None:
    calls: list[str] = []
    graph = abc(calls).compile(checkpointer=InMemorySaver())
    first, second = cfg("only-this-run"), cfg("plain-run")
    assert runner.invoke(graph, {"log": ""}, first, interrupt_before=["b"]) == {"log": "a"}
    assert runner.invoke(graph, {"log": ""}, second) == {"log": "abc"}


def test_interrupt_before_star_stops_before_every_node(runner: Runner) -> None:
    calls: list[str] = []
    graph = abc(calls).compile(checkpointer=InMemorySaver(), interrupt_before="*")
    config = cfg("star-before")
    assert runner.invoke(graph, {"log": ""}, config) == {"log": ""}
    assert calls == []
    assert runner.get_state(graph, config).next == ("a",)
    assert runner.invoke(graph, None, config) == {"log": "a"}
    assert runner.get_state(graph, config).next == ("b",)
    assert runner.invoke(graph, None, config) == {"log": "ab"}
    assert runner.get_state(graph, config).next == ("c",)
    assert calls == ["a", "b"]
    # no extra checkpoint is written for a breakpoint before a node
    assert shape(runner.history(graph, config)) == FULL_HISTORY[1:]
    assert runner.invoke(graph, None, config) == {"log": "abc"}
    assert shape(runner.history(graph, config)) == FULL_HISTORY


def test_interrupt_after_star_per_run(runner: Runner) -> None:
    calls: list[str] = []
    graph = abc(calls).compile(checkpointer=InMemorySaver())
    config = cfg("star-after")
    assert runner.invoke(graph, {"log": ""}, config, interrupt_after="*") == {"log": "a"}
    assert runner.get_state(graph, config).next == ("b",)
    assert runner.invoke(graph, None, config, interrupt_after="*") == {"log": "ab"}
    assert runner.get_state(graph, config).next == ("c",)
    assert runner.invoke(graph, None, config, interrupt_after="*") == {"log": "abc"}
    assert runner.get_state(graph, config).next == ()
    assert calls == ["a", "b", "c"]
    assert shape(runner.history(graph, config)) == FULL_HISTORY


def test_stream_reports_breakpoint_with_empty_interrupt_chunk(runner: Runner) -> None:
    graph = abc([]).compile(checkpointer=InMemorySaver(), interrupt_before=["b"])
    chunks = runner.stream(graph, {"log": ""}, cfg("stream-bp"))
    assert chunks == [{"a": {"log": "a"}}, {"__interrupt__": ()}]

    star = abc([]).compile(checkpointer=InMemorySaver(), interrupt_before="*")
    assert runner.stream(star, {"log": ""}, cfg("stream-star")) == [{"__interrupt__": ()}]


def test_stream_values_stops_at_breakpoint(runner: Runner) -> None:
    graph = abc([]).compile(checkpointer=InMemorySaver(), interrupt_before=["b"])
    chunks = runner.stream(graph, {"log": ""}, cfg("values-bp"), stream_mode="values")
    assert chunks == [{"log": ""}, {"log": "a"}]


def test_update_state_at_breakpoint_then_continue(runner: Runner) -> None:
    seen: list[tuple[str, str]] = []

    def make(name: str) -> Any:
        def node(state: Text) -> dict[str, str]:
            seen.append((name, state.get("log", "")))
            return {"log": state.get("log", "") + name}

        return node

    builder = StateGraph(Text)
    for name in "abc":
        builder.add_node(name, make(name))
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("b", "c")
    graph = builder.compile(checkpointer=InMemorySaver(), interrupt_before=["b"])
    config = cfg("edit-at-bp")
    runner.invoke(graph, {"log": ""}, config)
    graph.update_state(config, {"log": "X"})
    assert runner.get_state(graph, config).next == ("b",)
    assert runner.invoke(graph, None, config) == {"log": "Xbc"}
    assert seen == [("a", ""), ("b", "X"), ("c", "Xb")]
    assert shape(runner.history(graph, config)) == [
        ("loop", 4, ()),
        ("loop", 3, ("c",)),
        ("update", 2, ("b",)),
        ("loop", 1, ("b",)),
        ("loop", 0, ("a",)),
        ("input", -1, ("__start__",)),
    ]


def test_breakpoint_and_dynamic_interrupt_together(runner: Runner) -> None:
    from stategraph.types import Command, interrupt

    calls: list[str] = []

    def ask(state: Text) -> dict[str, str]:
        calls.append("ask")
        return {"log": state.get("log", "") + interrupt("ok?")}

    def done(state: Text) -> dict[str, str]:
        calls.append("done")
        return {"log": state.get("log", "") + "!"}

    builder = StateGraph(Text)
    builder.add_node("ask", ask)
    builder.add_node("done", done)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", "done")
    graph = builder.compile(checkpointer=InMemorySaver(), interrupt_before=["done"])
    config = cfg("both-kinds")
    first = runner.invoke(graph, {"log": ""}, config)
    assert [i.value for i in first["__interrupt__"]] == ["ok?"]
    second = runner.invoke(graph, Command(resume="yes"), config)
    assert second == {"log": "yes"}
    assert runner.get_state(graph, config).next == ("done",)
    assert runner.invoke(graph, None, config) == {"log": "yes!"}
    assert calls == ["ask", "ask", "done"]
