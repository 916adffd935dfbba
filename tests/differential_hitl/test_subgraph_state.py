"""``get_state(subgraphs=True)`` for subgraph tasks.

Expected values recorded from LangGraph 1.2.24 (same code, import prefix changed).
A compiled graph called inside a node function is a subgraph like one added as a
node: the task's ``state`` is its snapshot (``subgraphs=True``) or its config. A
subgraph task that finished while a sibling interrupted still shows its snapshot.
"""

from __future__ import annotations

from typing import Any

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import START, StateGraph
from stategraph.types import Command

from ._support import Log, Runner, asking, cfg, pending, step


def child(*, asks: bool) -> Any:
    """A compiled subgraph START -> x -> y (y asks "q" when ``asks``)."""
    builder = StateGraph(Log)
    builder.add_node("x", step("x"))
    builder.add_edge(START, "x")
    if asks:
        builder.add_node("y", asking("y", "q"))
        builder.add_edge("x", "y")
    return builder.compile()


def calling_parent(sub: Any) -> Any:
    """START -> a -> s, where s is a function that invokes ``sub``."""

    def s(state: Log) -> dict[str, Any]:
        out = sub.invoke(state)
        return {"log": out["log"][len(state.get("log", [])) :]}

    builder = StateGraph(Log)
    builder.add_node("a", step("a"))
    builder.add_node("s", s)
    builder.add_edge(START, "a")
    builder.add_edge("a", "s")
    return builder.compile(checkpointer=InMemorySaver())


def test_subgraph_called_in_a_node_shows_its_snapshot(runner: Runner) -> None:
    graph = calling_parent(child(asks=True))
    out = runner.invoke(graph, {"log": ["in"]}, cfg())
    assert pending(out) == ["q"]
    (task,) = runner.get_state(graph, cfg(), subgraphs=True).tasks
    # LangGraph 1.2.24: task.state is the subgraph's StateSnapshot.
    assert task.name == "s"
    assert type(task.state).__name__ == "StateSnapshot"
    assert task.state.values == {"log": ["in", "a", "x"]}
    assert task.state.next == ("y",)
    assert [i.value for i in task.state.interrupts] == ["q"]
    out = runner.invoke(graph, Command(resume="R"), cfg())
    assert out == {"log": ["in", "a", "x", "y='R'"]}


def test_subgraph_called_in_a_node_task_state_is_its_config(runner: Runner) -> None:
    graph = calling_parent(child(asks=True))
    runner.invoke(graph, {"log": ["in"]}, cfg())
    (task,) = runner.get_state(graph, cfg()).tasks
    # LangGraph 1.2.24: {'configurable': {'thread_id': 't', 'checkpoint_ns': 's:<task id>'}}
    assert isinstance(task.state, dict)
    assert task.state["configurable"]["thread_id"] == "t"
    assert task.state["configurable"]["checkpoint_ns"] == f"s:{task.id}"


def test_get_subgraphs_lists_a_subgraph_called_in_a_node() -> None:
    sub = child(asks=False)
    graph = calling_parent(sub)
    # LangGraph 1.2.24: [('s', <the compiled subgraph>)]
    assert [(name, g is sub) for name, g in graph.get_subgraphs()] == [("s", True)]


def test_finished_subgraph_task_beside_an_interrupt_shows_its_snapshot(runner: Runner) -> None:
    builder = StateGraph(Log)
    builder.add_node("s", child(asks=False))
    builder.add_node("a", asking("a", "q"))
    builder.add_edge(START, "a")
    builder.add_edge(START, "s")
    graph = builder.compile(checkpointer=InMemorySaver())
    out = runner.invoke(graph, {"log": ["in"]}, cfg())
    assert out["log"] == ["in", "in", "x"]
    assert pending(out) == ["q"]
    tasks = {t.name: t for t in runner.get_state(graph, cfg(), subgraphs=True).tasks}
    # LangGraph 1.2.24: s's state is StateSnapshot(values={'log': ['in', 'x']}, next=()).
    assert type(tasks["s"].state).__name__ == "StateSnapshot"
    assert tasks["s"].state.values == {"log": ["in", "x"]}
    assert tasks["s"].state.next == ()
    assert tasks["a"].state is None
