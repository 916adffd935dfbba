"""Which interrupt a ``Command(resume=...)`` answers when nothing or no id matches.

Expected values recorded from LangGraph 1.2.24 (same code, import prefix changed).
A resume value only answers interrupts pending in the checkpoint it resumes; an empty
map, or a map of ids that are not pending, answers nothing.
"""

from __future__ import annotations

import pytest

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.errors import UnknownInterruptError
from stategraph.graph import START, StateGraph
from stategraph.types import Command

from ._support import Log, Runner, asking, cfg, pending, step


def two_steps(**compile_kw: object) -> object:
    """START -> a -> b, where b asks "q1" then "q2"."""
    builder = StateGraph(Log)
    builder.add_node("a", step("a"))
    builder.add_node("b", asking("b", "q1", "q2"))
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    return builder.compile(checkpointer=InMemorySaver(), **compile_kw)


def test_resume_on_a_new_thread_does_not_answer_a_later_interrupt(runner: Runner) -> None:
    graph = two_steps()
    out = runner.invoke(graph, Command(resume="x"), cfg())
    # LangGraph 1.2.24: {'log': ['a'], '__interrupt__': [Interrupt(value='q1', ...)]}
    assert out["log"] == ["a"]
    assert pending(out) == ["q1"]
    assert runner.get_state(graph, cfg()).next == ("b",)


def test_resume_past_a_breakpoint_is_not_kept_for_the_next_step(runner: Runner) -> None:
    graph = two_steps()
    assert runner.invoke(graph, {"log": ["in"]}, cfg(), interrupt_before=["a"]) == {"log": ["in"]}
    out = runner.invoke(graph, Command(resume="R"), cfg())
    # LangGraph 1.2.24: a runs, then b asks its first question: "R" answered nothing.
    assert out["log"] == ["in", "a"]
    assert pending(out) == ["q1"]
    out = runner.invoke(graph, Command(resume="A"), cfg())
    assert pending(out) == ["q2"]
    out = runner.invoke(graph, Command(resume="B"), cfg())
    assert out == {"log": ["in", "a", "b='A','B'"]}


def test_empty_resume_map_at_a_breakpoint_answers_nothing(runner: Runner) -> None:
    graph = two_steps(interrupt_before=["b"])
    runner.invoke(graph, {"log": ["in"]}, cfg())
    out = runner.invoke(graph, Command(resume={}), cfg())
    # LangGraph 1.2.24: {'log': ['in', 'a'], '__interrupt__': [Interrupt(value='q1', ...)]}
    assert out["log"] == ["in", "a"]
    assert pending(out) == ["q1"]


def test_empty_resume_map_on_an_interrupted_thread_is_refused(runner: Runner) -> None:
    graph = two_steps()
    first = runner.invoke(graph, {"log": ["in"]}, cfg())
    # LangGraph 1.2.24 asks the same question again (the resume is silently a no-op);
    # stategraph refuses it, naming what waits (docs/differences.md), and the thread
    # is left as it was
    with pytest.raises(UnknownInterruptError) as info:
        runner.invoke(graph, Command(resume={}), cfg())
    assert info.value.reason == "empty_map"
    assert info.value.pending_ids == (first["__interrupt__"][0].id,)
    out = runner.invoke(graph, Command(resume="x"), cfg())
    assert out["log"][:2] == ["in", "a"]


def test_resume_map_with_an_unknown_id_is_refused(runner: Runner) -> None:
    graph = two_steps()
    first = runner.invoke(graph, {"log": ["in"]}, cfg())
    stranger = "0123456789abcdef0123456789abcdef"
    # LangGraph 1.2.24 answers nothing and returns the same interrupt; stategraph
    # refuses the resume (the answer would be lost silently)
    with pytest.raises(UnknownInterruptError) as info:
        runner.invoke(graph, Command(resume={stranger: 1}), cfg())
    assert info.value.interrupt_ids == (stranger,)
    assert info.value.pending_ids == (first["__interrupt__"][0].id,)


def test_resume_at_a_breakpoint_answers_the_first_question_of_the_next_node(
    runner: Runner,
) -> None:
    graph = two_steps()
    assert runner.invoke(graph, {"log": ["in"]}, cfg(), interrupt_before=["b"]) == {
        "log": ["in", "a"]
    }
    out = runner.invoke(graph, Command(resume="R"), cfg())
    # LangGraph 1.2.24: b runs, "R" answers q1 and b asks q2.
    assert out["log"] == ["in", "a"]
    assert pending(out) == ["q2"]
    out = runner.invoke(graph, Command(resume="S"), cfg())
    assert out == {"log": ["in", "a", "b='R','S'"]}


def test_dict_resume_at_a_compiled_breakpoint_is_an_answer(runner: Runner) -> None:
    graph = two_steps(interrupt_before=["b"])
    runner.invoke(graph, {"log": ["in"]}, cfg())
    out = runner.invoke(graph, Command(resume={"approved": True}), cfg())
    # LangGraph 1.2.24: a dict whose keys are not interrupt ids is a value: q1 answered.
    assert pending(out) == ["q2"]
    out = runner.invoke(graph, Command(resume="S"), cfg())
    assert out == {"log": ["in", "a", "b={'approved': True},'S'"]}
