"""Under ``invoke``/``stream`` a node's context-variable changes stay inside the node.

A step with one task runs it on the calling thread (no hand-off to a worker); it must
still run in a copy of the caller's context, as a worker thread's task does, so what a
node or its routing function sets is seen neither by the next node nor by the caller.
LangGraph 1.2.22 behaves so (checked side by side).
"""

from __future__ import annotations

import contextvars
import operator
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from stategraph.graph import START, StateGraph

MARK: contextvars.ContextVar[str] = contextvars.ContextVar("MARK", default="caller")


class State(TypedDict):
    seen: Annotated[list[str], operator.add]


def build(set_in_router: bool) -> Any:
    def first(state: State) -> dict[str, list[str]]:
        MARK.set("first")
        return {"seen": [MARK.get()]}

    def second(state: State) -> dict[str, list[str]]:
        return {"seen": [MARK.get()]}

    def route(state: State) -> str:
        if set_in_router:
            MARK.set("router")
        return "second"

    builder = StateGraph(State)
    builder.add_node("first", first)
    builder.add_node("second", second)
    builder.add_edge(START, "first")
    builder.add_conditional_edges("first", route, ["second"])
    return builder.compile()


@pytest.mark.parametrize("set_in_router", [False, True])
def test_invoke_keeps_a_nodes_context_changes_inside_it(set_in_router: bool) -> None:
    graph = build(set_in_router)
    token = MARK.set("caller")
    try:
        out = graph.invoke({"seen": []})
        assert out["seen"] == ["first", "caller"]
        assert MARK.get() == "caller"
    finally:
        MARK.reset(token)


def test_stream_keeps_a_nodes_context_changes_inside_it() -> None:
    graph = build(True)
    chunks = list(graph.stream({"seen": []}))
    assert chunks == [{"first": {"seen": ["first"]}}, {"second": {"seen": ["caller"]}}]
    assert MARK.get() == "caller"


def test_the_node_still_sees_what_the_caller_set() -> None:
    graph = build(False)
    token = MARK.set("set by the caller")
    try:
        # `second` reads the caller's value: the copy starts from the caller's context
        assert graph.invoke({"seen": []})["seen"] == ["first", "set by the caller"]
    finally:
        MARK.reset(token)
