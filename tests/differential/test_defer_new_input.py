"""A new input on a thread whose last run stopped early, with a deferred node waiting.

Found by the differential fuzzer (tools/differential); expected values recorded from
LangGraph 1.2.24. The previous run stopped (interrupt or error) while a ``defer=True``
node was still waiting for the run to finish. A new dict input starts a new run from
START: LangGraph does not run the waiting deferred node first; it runs when the new run
reaches its end (if it is triggered again).
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, Callable, TypedDict

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import START, StateGraph
from stategraph.types import interrupt


class State(TypedDict, total=False):
    trace: Annotated[list, operator.add]


def node(name: str, pause: bool = False, fail: dict | None = None) -> Callable[[State], dict]:
    def fn(state: State) -> dict[str, Any]:
        if pause:
            interrupt(name)
        if fail is not None and fail["left"]:
            fail["left"] -= 1
            raise ValueError(name)
        return {"trace": [name]}

    return fn


def build(x: Callable[[State], dict]) -> Any:
    g = StateGraph(State)
    g.add_node("a", node("a"))
    g.add_node("d", node("d"), defer=True)
    g.add_node("x", x)
    g.add_edge(START, "a")
    g.add_edge("a", "d")
    g.add_edge("a", "x")
    return g.compile(checkpointer=InMemorySaver())


def names(chunks: list[dict]) -> list[list[str]]:
    return [sorted(chunk) for chunk in chunks]


def test_new_input_after_interrupt_does_not_run_waiting_deferred_node(runner: Any) -> None:
    graph = build(node("x", pause=True))
    config = {"configurable": {"thread_id": "t"}}
    first = runner.stream(graph, {"trace": ["in1"]}, config, stream_mode="updates")
    assert names(first) == [["a"], ["__interrupt__"]]
    assert graph.get_state(config).values["trace"] == ["in1", "a"]
    second = runner.stream(graph, {"trace": ["in2"]}, config, stream_mode="updates")
    # recorded from LangGraph 1.2.24: "d" does not run before "a"
    assert names(second) == [["a"], ["__interrupt__"]]
    assert graph.get_state(config).values["trace"] == ["in1", "a", "in2", "a"]


def test_new_input_after_error_does_not_run_waiting_deferred_node(runner: Any) -> None:
    graph = build(node("x", fail={"left": 1}))
    config = {"configurable": {"thread_id": "t"}}
    try:
        runner.stream(graph, {"trace": ["in1"]}, config, stream_mode="updates")
    except ValueError:
        pass
    else:
        raise AssertionError("the first run must fail")
    assert graph.get_state(config).values["trace"] == ["in1", "a"]
    second = runner.stream(graph, {"trace": ["in2"]}, config, stream_mode="updates")
    # recorded from LangGraph 1.2.24: a, then x, then the deferred d once at the end
    assert names(second) == [["a"], ["x"], ["d"]]
    assert graph.get_state(config).values["trace"] == ["in1", "a", "in2", "a", "x", "d"]
