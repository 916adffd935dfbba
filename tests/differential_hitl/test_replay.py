"""Running from an explicit checkpoint of an ``update`` or ``fork`` (replay).

Expected values recorded from LangGraph 1.2.24 (same code, import prefix changed).
Running from a past ``update`` checkpoint forks: its tasks run again and ask their
questions again (answers given after that checkpoint are not reused). Running from
the head when it is a ``fork``/``update`` checkpoint re-runs its tasks in place: no
new checkpoint, finished tasks run again, pending interrupts keep their ids.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import START, StateGraph
from stategraph.types import Command

from ._support import Log, Runner, asking, cfg, pending, shape, step


def chain(runs: Counter[str] | None = None) -> Any:
    """START -> a -> b (asks "q1") -> c."""
    builder = StateGraph(Log)
    builder.add_node("a", step("a", runs))
    builder.add_node("b", asking("b", "q1", runs=runs))
    builder.add_node("c", step("c", runs))
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("b", "c")
    return builder.compile(checkpointer=InMemorySaver())


def test_replay_from_a_past_update_checkpoint_forks(runner: Runner) -> None:
    graph = chain()
    runner.invoke(graph, {"log": ["in"]}, cfg(), interrupt_before=["b"])
    runner.update_state(graph, cfg(), {"log": ["u"]})
    runner.invoke(graph, None, cfg())
    assert runner.invoke(graph, Command(resume="R"), cfg()) == {
        "log": ["in", "a", "u", "b='R'", "c"]
    }
    history = runner.history(graph, cfg())
    assert shape(history) == [
        ("loop", 4, ()),
        ("loop", 3, ("c",)),
        ("update", 2, ("b",)),
        ("loop", 1, ("b",)),
        ("loop", 0, ("a",)),
        ("input", -1, ("__start__",)),
    ]
    out = runner.invoke(graph, None, history[2].config)
    # LangGraph 1.2.24: b asks again; a 'fork' checkpoint at step 3 is the new head.
    assert out["log"] == ["in", "a", "u"]
    assert pending(out) == ["q1"]
    head = runner.get_state(graph, cfg())
    assert (head.metadata["source"], head.metadata["step"], head.next) == ("fork", 3, ("b",))
    assert len(runner.history(graph, cfg())) == 7


def test_replay_of_a_fork_head_reruns_in_place(runner: Runner) -> None:
    runs: Counter[str] = Counter()
    builder = StateGraph(Log)
    builder.add_node("a", step("a", runs))
    builder.add_node("b", asking("b", "q", runs=runs))
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    graph = builder.compile(checkpointer=InMemorySaver())
    runner.invoke(graph, {"log": ["in"]}, cfg())
    first = runner.invoke(graph, None, runner.get_state(graph, cfg()).config)
    assert shape(runner.history(graph, cfg()))[0] == ("fork", 1, ("a", "b"))
    assert runs == {"a": 2, "b": 2}
    again = runner.invoke(graph, None, runner.get_state(graph, cfg()).config)
    # LangGraph 1.2.24: a and b run again, no new checkpoint, same interrupt id.
    assert again["log"] == ["in", "a"]
    assert again["__interrupt__"][0].id == first["__interrupt__"][0].id
    assert runs == {"a": 3, "b": 3}
    assert shape(runner.history(graph, cfg())) == [
        ("fork", 1, ("a", "b")),
        ("loop", 0, ("a", "b")),
        ("input", -1, ("__start__",)),
    ]


def test_replay_of_an_update_head_reruns_finished_tasks(runner: Runner) -> None:
    runs: Counter[str] = Counter()
    builder = StateGraph(Log)
    builder.add_node("z", step("z", runs))
    builder.add_node("a", step("a", runs))
    builder.add_node("b", asking("b", "q", runs=runs))
    builder.add_edge(START, "z")
    builder.add_edge("z", "a")
    builder.add_edge("z", "b")
    graph = builder.compile(checkpointer=InMemorySaver())
    runner.invoke(graph, {"log": ["in"]}, cfg())
    past = next(s for s in runner.history(graph, cfg()) if s.next == ("z",))
    forked = runner.update_state(graph, past.config, {"log": ["v"]}, as_node="z")
    runner.invoke(graph, None, forked)
    assert runs == {"z": 1, "a": 2, "b": 2}
    out = runner.invoke(graph, None, runner.get_state(graph, cfg()).config)
    # LangGraph 1.2.24: a (already finished in that step) runs again.
    assert out["log"] == ["in", "v", "a"]
    assert pending(out) == ["q"]
    assert runs == {"z": 1, "a": 3, "b": 3}
    assert shape(runner.history(graph, cfg())) == [
        ("update", 1, ("a", "b")),
        ("loop", 1, ("a", "b")),
        ("loop", 0, ("z",)),
        ("input", -1, ("__start__",)),
    ]
