"""What ``invoke`` returns when the run wrote no channel.

Expected values recorded from LangGraph 1.2.24 (same code, import prefix changed).
``invoke`` returns the last ``values`` chunk of the stream; when a run emits none
(empty input, then a breakpoint before the first node) it returns ``None``.
"""

from __future__ import annotations

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import START, StateGraph

from ._support import Log, Runner, cfg, step


def one_node(checkpointer: object = None) -> object:
    """START -> a."""
    builder = StateGraph(Log)
    builder.add_node("a", step("a"))
    builder.add_edge(START, "a")
    return builder.compile(checkpointer=checkpointer)


def test_empty_input_stopped_before_the_first_node_returns_none(runner: Runner) -> None:
    graph = one_node(InMemorySaver())
    # LangGraph 1.2.24: None (the stream emitted no values chunk).
    assert runner.invoke(graph, {}, cfg(), interrupt_before=["a"]) is None
    assert runner.get_state(graph, cfg()).values == {"log": []}
    assert runner.get_state(graph, cfg()).next == ("a",)
    assert runner.invoke(graph, None, cfg()) == {"log": ["a"]}


def test_empty_input_without_checkpointer_returns_none(runner: Runner) -> None:
    graph = one_node()
    # LangGraph 1.2.24: None.
    assert runner.invoke(graph, {}, None, interrupt_before=["a"]) is None


def test_an_empty_list_is_a_written_value(runner: Runner) -> None:
    graph = one_node(InMemorySaver())
    # LangGraph 1.2.24: {'log': []}: writing [] emits a values chunk.
    assert runner.invoke(graph, {"log": []}, cfg(), interrupt_before=["a"]) == {"log": []}
