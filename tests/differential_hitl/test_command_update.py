"""``Command(update=..., goto=...)`` sent as the input of a run.

Expected values recorded from LangGraph 1.2.24 (same code, import prefix changed).
LangGraph applies the update to the thread's head checkpoint itself: history shows
it, later inputs and later commands keep it, and ``goto`` targets run in the step
after the input, next to START's successors.
"""

from __future__ import annotations

import pytest

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import START, StateGraph
from stategraph.types import Command

from ._support import Log, Runner, asking, cfg, pending, shape, step


def one_node() -> object:
    """START -> a."""
    builder = StateGraph(Log)
    builder.add_node("a", step("a"))
    builder.add_edge(START, "a")
    return builder.compile(checkpointer=InMemorySaver())


def ask_then_b() -> object:
    """START -> a (asks "q") -> b."""
    builder = StateGraph(Log)
    builder.add_node("a", asking("a", "q"))
    builder.add_node("b", step("b"))
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    return builder.compile(checkpointer=InMemorySaver())


def ask_beside_b() -> object:
    """START -> a (asks "q") and START -> b (writes log and last)."""

    def b(state: Log) -> dict[str, object]:
        return {"log": ["b"], "last": "b"}

    builder = StateGraph(Log)
    builder.add_node("a", asking("a", "q"))
    builder.add_node("b", b)
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    return builder.compile(checkpointer=InMemorySaver())


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
def test_history_head_shows_the_command_update(runner: Runner, durability: str) -> None:
    graph = one_node()
    runner.invoke(graph, {"log": ["in"]}, cfg())
    out = runner.invoke(graph, Command(update={"log": ["u"]}), cfg(), durability=durability)
    assert out == {"log": ["in", "a", "u"]}
    state = runner.get_state(graph, cfg())
    history = runner.history(graph, cfg())
    # LangGraph 1.2.24: no new checkpoint; the head (step 1) now holds the update.
    assert [s.values for s in history] == [
        {"log": ["in", "a", "u"]},
        {"log": ["in"]},
        {"log": []},
    ]
    assert shape(history)[0] == ("loop", 1, ())
    assert (
        history[0].config["configurable"]["checkpoint_id"]
        == (state.config["configurable"]["checkpoint_id"])
    )
    assert history[0].values == state.values


def test_command_update_on_an_interrupted_thread_survives_a_new_input(runner: Runner) -> None:
    graph = ask_then_b()
    runner.invoke(graph, {"log": ["in"]}, cfg())
    out = runner.invoke(graph, Command(update={"last": "x"}), cfg())
    assert out["last"] == "x"
    out = runner.invoke(graph, {"log": ["in2"]}, cfg())
    # LangGraph 1.2.24: {'log': ['in', 'in2'], 'last': 'x', '__interrupt__': [...'q'...]}
    assert out["log"] == ["in", "in2"]
    assert out["last"] == "x"
    assert pending(out) == ["q"]
    assert runner.get_state(graph, cfg()).values == {"log": ["in", "in2"], "last": "x"}


def test_two_command_updates_are_both_kept(runner: Runner) -> None:
    graph = ask_beside_b()
    runner.invoke(graph, {"log": ["in"]}, cfg())
    runner.invoke(graph, Command(update={"log": ["u1"]}), cfg())
    runner.invoke(graph, Command(update={"log": ["u2"]}), cfg())
    # LangGraph 1.2.24: {'log': ['in', 'u1', 'u2', 'b'], 'last': 'b'}
    assert runner.get_state(graph, cfg()).values == {"log": ["in", "u1", "u2", "b"], "last": "b"}
    out = runner.invoke(graph, Command(resume="R"), cfg())
    assert out == {"log": ["in", "u1", "u2", "a='R'", "b"], "last": "b"}


def test_get_state_after_updating_a_key_a_finished_sibling_wrote(runner: Runner) -> None:
    graph = ask_beside_b()
    runner.invoke(graph, {"log": ["in"]}, cfg())
    out = runner.invoke(graph, Command(update={"last": "x"}), cfg())
    assert out["last"] == "b"
    assert pending(out) == ["q"]
    # LangGraph 1.2.24: get_state() works: {'log': ['in', 'b'], 'last': 'b'}
    state = runner.get_state(graph, cfg())
    assert state.values == {"log": ["in", "b"], "last": "b"}
    assert state.next == ("a",)
    assert runner.invoke(graph, Command(resume="R"), cfg()) == {
        "log": ["in", "a='R'", "b"],
        "last": "b",
    }


def test_goto_as_the_first_input_runs_after_the_input_step(runner: Runner) -> None:
    builder = StateGraph(Log)
    builder.add_node("a", step("a"))
    builder.add_node("b", step("b"))
    builder.add_edge(START, "a")
    graph = builder.compile(checkpointer=InMemorySaver())
    out = runner.invoke(graph, Command(goto="b"), cfg())
    # LangGraph 1.2.24: {'log': ['a', 'b']}; b runs in step 0 next to a.
    assert out == {"log": ["a", "b"]}
    assert shape(runner.history(graph, cfg())) == [
        ("loop", 1, ()),
        ("loop", 0, ("a", "b")),
        ("input", -1, ("__start__",)),
    ]


def test_command_update_on_an_update_only_thread_is_in_its_head(runner: Runner) -> None:
    builder = StateGraph(Log)
    builder.add_node("a", step("a"))
    builder.add_node("b", step("b"))
    builder.add_edge(START, "a")
    graph = builder.compile(checkpointer=InMemorySaver())
    runner.update_state(graph, cfg(), {"log": ["p"]}, as_node="a")
    out = runner.invoke(graph, Command(goto="b", update={"log": ["u"]}), cfg())
    assert out == {"log": ["p", "u", "b"]}
    history = runner.history(graph, cfg())
    # LangGraph 1.2.24: [('loop', 1, ()), ('update', 0, ())], the update folded into step 0.
    assert shape(history) == [("loop", 1, ()), ("update", 0, ())]
    assert [s.values for s in history] == [{"log": ["p", "u", "b"]}, {"log": ["p", "u"]}]
