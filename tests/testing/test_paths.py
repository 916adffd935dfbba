"""Tracing and asserting the path a run took."""

from __future__ import annotations

import operator
from typing import Annotated

import pytest
from typing_extensions import TypedDict

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import END, START, StateGraph
from stategraph.testing import RunPath, assert_path, atrace_path, trace_path
from stategraph.types import Command, interrupt


class State(TypedDict):
    log: Annotated[list[str], operator.add]


def node(name: str):
    def run(state: State) -> dict:
        return {"log": [name]}

    return run


def fan_out_graph():
    b = StateGraph(State)
    for n in ("plan", "search", "fetch", "write"):
        b.add_node(n, node(n))
    b.add_edge(START, "plan")
    b.add_edge("plan", "search")
    b.add_edge("plan", "fetch")
    b.add_edge(["search", "fetch"], "write")
    b.add_edge("write", END)
    return b.compile()


def test_trace_groups_parallel_nodes_by_step():
    path = trace_path(fan_out_graph(), {"log": []})
    assert path.steps == [["plan"], ["fetch", "search"], ["write"]]
    assert path.nodes == ["plan", "fetch", "search", "write"]
    assert path.visited("search") and not path.visited("nope")
    assert not path.interrupted


def test_assert_path_accepts_steps_or_a_flat_list():
    path = trace_path(fan_out_graph(), {"log": []})
    assert_path(path, ["plan", ["search", "fetch"], "write"])
    assert_path(path, ["plan", "search", "fetch", "write"])
    assert_path(path.steps, [["plan"], ["fetch", "search"], ["write"]])


def test_assert_path_explains_the_difference():
    path = trace_path(fan_out_graph(), {"log": []})
    with pytest.raises(AssertionError) as info:
        assert_path(path, ["plan", "search", "write"])
    message = str(info.value)
    assert "expected: plan -> search -> write" in message
    assert "actual:   plan -> {fetch, search} -> write" in message
    assert "first difference at step 2" in message
    with pytest.raises(AssertionError, match="the common steps agree; ran more steps"):
        assert_path(path, ["plan", ["fetch", "search"]])


def test_subgraph_steps_and_interrupts():
    inner = StateGraph(State)
    inner.add_node("ask", lambda s: {"log": [interrupt("ok?")]})
    inner.add_node("first", node("first"))
    inner.add_edge(START, "first")
    inner.add_edge("first", "ask")
    outer = StateGraph(State)
    outer.add_node("sub", inner.compile())
    outer.add_edge(START, "sub")
    graph = outer.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    path = trace_path(graph, {"log": []}, config)
    assert path.steps == [["sub"]]
    assert path.subgraphs == {"sub": [["first"], ["ask"]]}
    assert path.interrupted and path.interrupts == ["ok?"]
    assert_path(path, ["first", "ask"], subgraph="sub")
    with pytest.raises(AssertionError, match="Subgraph 'other' did not run"):
        assert_path(path, ["x"], subgraph="other")
    resumed = trace_path(graph, Command(resume="yes"), config)
    assert resumed.subgraphs == {"sub": [["ask"]]} and not resumed.interrupted


async def test_atrace_path():
    path = await atrace_path(fan_out_graph(), {"log": []})
    assert isinstance(path, RunPath) and path.steps[-1] == ["write"]
