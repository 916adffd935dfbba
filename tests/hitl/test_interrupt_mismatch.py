"""Detection of the resume-index pitfall: an answer reaching a different question.

A resumed node re-runs from its start and its interrupt() calls are matched to the
saved answers by call order. When the node asks something else at index k than the
question the answer was given for, stategraph warns (``RuntimeWarning``) or, with
``compile(strict=True)``, raises ``InterruptMismatchError``. LangGraph matches silently.
"""

from __future__ import annotations

import operator
import re
import warnings
from pathlib import Path
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.checkpoint.sqlite import SqliteSaver
from stategraph.graph import START, StateGraph
from stategraph.pregel._task import InterruptMismatchError
from stategraph.types import Command, interrupt

from ._support import Runner, cfg


class Out(TypedDict, total=False):
    out: list[str]


class Log(TypedDict, total=False):
    out: Annotated[list[str], operator.add]


def flag_graph(flags: dict[str, bool], *, strict: bool = False, saver: Any = None) -> Any:
    """``ask`` asks name/age first only when ``flags["verbose"]``; it always asks email."""

    def ask(state: Out) -> dict[str, list[str]]:
        answers = []
        if flags["verbose"]:
            answers.append(interrupt("name?"))
            answers.append(interrupt("age?"))
        answers.append(interrupt("email?"))
        return {"out": answers}

    builder = StateGraph(Out)
    builder.add_node("ask", ask)
    builder.add_edge(START, "ask")
    return builder.compile(checkpointer=saver or InMemorySaver(), strict=strict)


def _check_message(message: str, index: int, given_for: str, reached: str) -> None:
    assert "'ask'" in message
    assert re.search(rf"(#|index ){index}\b", message), message
    assert repr(given_for) in message
    assert repr(reached) in message


def _mismatches(record: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in record if issubclass(w.category, RuntimeWarning)]


def test_consistent_node_resumes_without_warning(runner: Runner) -> None:
    flags = {"verbose": True}
    graph = flag_graph(flags)
    config = cfg("consistent")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        runner.invoke(graph, {"out": []}, config)
        runner.invoke(graph, Command(resume="Ada"), config)
        runner.invoke(graph, Command(resume="36"), config)
        final = runner.invoke(graph, Command(resume="ada@example.org"), config)
    assert final == {"out": ["Ada", "36", "ada@example.org"]}


def test_new_answer_reaching_other_question_warns(runner: Runner) -> None:
    flags = {"verbose": True}
    graph = flag_graph(flags)
    config = cfg("pending-mismatch")
    paused = runner.invoke(graph, {"out": []}, config)
    assert [i.value for i in paused["__interrupt__"]] == ["name?"]

    flags["verbose"] = False  # now interrupt #0 asks "email?"
    with pytest.warns(RuntimeWarning) as record:
        final = runner.invoke(graph, Command(resume="Ada"), config)
    messages = _mismatches(record.list)
    assert len(messages) == 1
    _check_message(messages[0], 0, given_for="name?", reached="email?")
    # like LangGraph, the answer is still delivered by position
    assert final == {"out": ["Ada"]}


def test_replayed_answer_reaching_other_question_warns(runner: Runner) -> None:
    flags = {"verbose": True}
    graph = flag_graph(flags)
    config = cfg("replay-mismatch")
    runner.invoke(graph, {"out": []}, config)
    runner.invoke(graph, Command(resume="Ada"), config)  # answers "name?"
    assert [i.value for i in runner.get_state(graph, config).interrupts] == ["age?"]

    flags["verbose"] = False  # on replay, interrupt #0 is now "email?"
    with pytest.warns(RuntimeWarning) as record:
        final = runner.invoke(graph, Command(resume="36"), config)
    messages = _mismatches(record.list)
    assert len(messages) >= 1
    _check_message(messages[0], 0, given_for="name?", reached="email?")
    assert final == {"out": ["Ada"]}


def test_mismatch_at_later_index_names_that_index(runner: Runner) -> None:
    state = {"second": "age?"}

    def ask(s: Out) -> dict[str, list[str]]:
        return {"out": [interrupt("name?"), interrupt(state["second"])]}

    builder = StateGraph(Out)
    builder.add_node("ask", ask)
    builder.add_edge(START, "ask")
    graph = builder.compile(checkpointer=InMemorySaver())
    config = cfg("index-one")
    runner.invoke(graph, {"out": []}, config)
    runner.invoke(graph, Command(resume="Ada"), config)
    state["second"] = "birthday?"
    with pytest.warns(RuntimeWarning) as record:
        final = runner.invoke(graph, Command(resume="36"), config)
    messages = _mismatches(record.list)
    assert len(messages) == 1
    _check_message(messages[0], 1, given_for="age?", reached="birthday?")
    assert final == {"out": ["Ada", "36"]}


def test_strict_pending_mismatch_is_an_error(runner: Runner) -> None:
    flags = {"verbose": True}
    graph = flag_graph(flags, strict=True)
    config = cfg("strict-pending")
    runner.invoke(graph, {"out": []}, config)
    flags["verbose"] = False
    with pytest.raises(InterruptMismatchError) as info:
        runner.invoke(graph, Command(resume="Ada"), config)
    _check_message(str(info.value), 0, given_for="name?", reached="email?")
    assert isinstance(info.value, RuntimeError)

    # once the node is consistent again, the same answer goes through
    flags["verbose"] = True
    follow = runner.invoke(graph, Command(resume="Ada"), config)
    assert [i.value for i in follow["__interrupt__"]] == ["age?"]


def test_strict_replay_mismatch_is_an_error(runner: Runner) -> None:
    flags = {"verbose": True}
    graph = flag_graph(flags, strict=True)
    config = cfg("strict-replay")
    runner.invoke(graph, {"out": []}, config)
    runner.invoke(graph, Command(resume="Ada"), config)
    flags["verbose"] = False
    with pytest.raises(InterruptMismatchError) as info:
        runner.invoke(graph, Command(resume="36"), config)
    _check_message(str(info.value), 0, given_for="name?", reached="email?")


def test_strict_consistent_node_runs_normally(runner: Runner) -> None:
    graph = flag_graph({"verbose": False}, strict=True)
    config = cfg("strict-ok")
    runner.invoke(graph, {"out": []}, config)
    assert runner.invoke(graph, Command(resume="x@y.z"), config) == {"out": ["x@y.z"]}


def test_mismatch_on_answer_by_id_in_parallel_tasks(runner: Runner) -> None:
    flags = {"a": "a?"}

    def a(state: Log) -> dict[str, list[str]]:
        return {"out": [interrupt(flags["a"])]}

    def b(state: Log) -> dict[str, list[str]]:
        return {"out": [interrupt("b?")]}

    builder = StateGraph(Log)
    builder.add_node("a", a)
    builder.add_node("b", b)
    builder.add_edge(START, "a")
    builder.add_edge(START, "b")
    graph = builder.compile(checkpointer=InMemorySaver())
    config = cfg("parallel-mismatch")
    paused = runner.invoke(graph, {"out": []}, config)
    ids = {i.value: i.id for i in paused["__interrupt__"]}
    flags["a"] = "a changed?"
    with pytest.warns(RuntimeWarning) as record:
        final = runner.invoke(graph, Command(resume={ids["a?"]: "A", ids["b?"]: "B"}), config)
    messages = _mismatches(record.list)
    assert len(messages) == 1
    assert "'a'" in messages[0]
    assert "'a?'" in messages[0]
    assert "'a changed?'" in messages[0]
    assert final == {"out": ["A", "B"]}


def test_mismatch_detected_after_reload_from_sqlite(tmp_path: Path) -> None:
    flags = {"verbose": True}
    db = str(tmp_path / "mismatch.sqlite")
    config = cfg("sqlite-mismatch")
    with SqliteSaver.from_conn_string(db) as saver:
        graph = flag_graph(flags, saver=saver)
        graph.invoke({"out": []}, config)
        graph.invoke(Command(resume="Ada"), config)
    flags["verbose"] = False
    with SqliteSaver.from_conn_string(db) as saver:
        graph = flag_graph(flags, saver=saver)
        with pytest.warns(RuntimeWarning) as record:
            final = graph.invoke(Command(resume="36"), config)
    _check_message(_mismatches(record.list)[0], 0, given_for="name?", reached="email?")
    assert final == {"out": ["Ada"]}
