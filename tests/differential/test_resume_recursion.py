"""Step budget of a resumed run (recursion limit and RemainingSteps).

Found by the differential fuzzer (tools/differential). Expected values were recorded
from LangGraph 1.2.24: a run that continues a thread from its checkpoint (input None,
``Command(resume=...)`` or ``Command(goto=...)``) may run ``recursion_limit + 1``
supersteps after the checkpoint's step, one more than a fresh run, and
``RemainingSteps`` counts from that budget. A fresh input on an existing thread gets
the ordinary budget.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

import pytest

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.errors import GraphRecursionError
from stategraph.graph import START, StateGraph
from stategraph.managed import RemainingSteps
from stategraph.types import Command, interrupt


class State(TypedDict, total=False):
    trace: Annotated[list, operator.add]
    rs: RemainingSteps


def record_remaining(state: State) -> dict[str, Any]:
    return {"trace": [state["rs"]]}


def self_loop() -> Any:
    g = StateGraph(State)
    g.add_node("f", record_remaining)
    g.add_edge(START, "f")
    g.add_edge("f", "f")
    return g.compile(checkpointer=InMemorySaver())


def run_to_limit(runner: Any, graph: Any, inp: Any, config: dict) -> list[Any]:
    with pytest.raises(GraphRecursionError):
        runner.invoke(graph, inp, config)
    return list(graph.get_state(config).values["trace"])


def test_resume_after_recursion_error_gets_limit_plus_one_steps(runner: Any) -> None:
    graph = self_loop()
    config = {"configurable": {"thread_id": "t"}, "recursion_limit": 3}
    assert run_to_limit(runner, graph, {"trace": []}, config) == [2, 1, 0]
    # recorded from LangGraph 1.2.24: each resume (input None) runs 5 steps
    assert run_to_limit(runner, graph, None, config) == [2, 1, 0, 4, 3, 2, 1, 0]
    assert run_to_limit(runner, graph, None, config) == [
        *[2, 1, 0],
        *[4, 3, 2, 1, 0],
        *[4, 3, 2, 1, 0],
    ]


def test_fresh_input_on_existing_thread_keeps_the_plain_budget(runner: Any) -> None:
    graph = self_loop()
    config = {"configurable": {"thread_id": "t"}, "recursion_limit": 3}
    assert run_to_limit(runner, graph, {"trace": []}, config) == [2, 1, 0]
    # recorded from LangGraph 1.2.24: a dict input starts a run with the usual 3 steps
    assert run_to_limit(runner, graph, {"trace": []}, config) == [2, 1, 0, 2, 1, 0]


def test_resume_after_interrupt_gets_limit_plus_one_steps(runner: Any) -> None:
    def f(state: State) -> dict[str, Any]:
        if len(state["trace"]) == 2:
            interrupt("q")
        return {"trace": [state["rs"]]}

    g = StateGraph(State)
    g.add_node("f", f)
    g.add_edge(START, "f")
    g.add_edge("f", "f")
    graph = g.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}, "recursion_limit": 4}
    out = runner.invoke(graph, {"trace": []}, config)
    assert [i.value for i in out["__interrupt__"]] == ["q"]
    assert out["trace"] == [3, 2]
    # recorded from LangGraph 1.2.24: the resumed node sees 5 remaining steps and the
    # resumed run executes 6 supersteps before GraphRecursionError
    assert run_to_limit(runner, graph, Command(resume="x"), config) == [3, 2, 5, 4, 3, 2, 1, 0]


def test_remaining_steps_after_interrupt_before(runner: Any) -> None:
    g = StateGraph(State)
    g.add_node("a", record_remaining)
    g.add_node("b", record_remaining)
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    graph = g.compile(checkpointer=InMemorySaver(), interrupt_before=["b"])
    config = {"configurable": {"thread_id": "t"}, "recursion_limit": 10}
    assert runner.invoke(graph, {"trace": []}, config) == {"trace": [9]}
    # recorded from LangGraph 1.2.24: 11 remaining steps for the resumed node
    assert runner.invoke(graph, None, config) == {"trace": [9, 11]}


def test_command_goto_input_on_existing_thread_gets_limit_plus_one_steps(runner: Any) -> None:
    def h(state: State) -> dict[str, Any]:
        return {"trace": ["h"]}

    g = StateGraph(State)
    g.add_node("h", h)
    g.add_node("f", record_remaining)
    g.add_edge(START, "h")
    g.add_edge("f", "f")
    graph = g.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}, "recursion_limit": 3}
    assert runner.invoke(graph, {"trace": []}, config) == {"trace": ["h"]}
    # recorded from LangGraph 1.2.24
    assert run_to_limit(runner, graph, Command(goto="f"), config) == ["h", 4, 3, 2, 1, 0]
