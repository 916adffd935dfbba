"""``update_state(config, values)`` without ``as_node``: which node it acts as.

Expected values recorded from LangGraph 1.2.24 (same code, import prefix changed).
LangGraph infers the last node that *ran*; an earlier ``update_state(as_node=...)``
does not make that node the last one.
"""

from __future__ import annotations

from typing import Any

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import START, StateGraph

from ._support import Log, Runner, cfg, step


def chain() -> Any:
    """START -> a -> b -> c."""
    builder = StateGraph(Log)
    for name in ("a", "b", "c"):
        builder.add_node(name, step(name))
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("b", "c")
    return builder.compile(checkpointer=InMemorySaver())


def test_inference_after_an_update_as_another_node_on_a_finished_thread(runner: Runner) -> None:
    graph = chain()
    runner.invoke(graph, {"log": ["in"]}, cfg())
    runner.update_state(graph, cfg(), {"log": ["u"]}, as_node="b")
    assert runner.get_state(graph, cfg()).next == ("c",)
    # LangGraph 1.2.24: no error; acts as c (the last node that ran): next == ().
    runner.update_state(graph, cfg(), {"log": ["w"]})
    state = runner.get_state(graph, cfg())
    assert state.next == ()
    assert state.values == {"log": ["in", "a", "b", "c", "u", "w"]}


def test_inference_after_an_update_as_the_pending_node(runner: Runner) -> None:
    graph = chain()
    runner.invoke(graph, {"log": ["in"]}, cfg(), interrupt_before=["b"])
    runner.update_state(graph, cfg(), {"log": ["u"]}, as_node="b")
    assert runner.get_state(graph, cfg()).next == ("c",)
    # LangGraph 1.2.24: acts as a (the last node that ran), so b is next again.
    runner.update_state(graph, cfg(), {"log": ["w"]})
    state = runner.get_state(graph, cfg())
    assert state.next == ("b",)
    assert state.values == {"log": ["in", "a", "u", "w"]}
