"""debug=True / print_mode print chunks as LangGraph does; DEBUG logging marks steps."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from typing_extensions import TypedDict

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import START, StateGraph


class State(TypedDict):
    value: str


def _add(tag: str) -> Any:
    def node(state: State) -> dict[str, Any]:
        return {"value": state["value"] + tag}

    return node


BOLD, OFF, NS = "\x1b[1m", "\x1b[0m", "\x1b[1;30;33m"


def test_debug_prints_values_and_updates(capsys: pytest.CaptureFixture[str]) -> None:
    graph = StateGraph(State).add_node("a", _add("A")).add_edge(START, "a").compile(debug=True)
    assert graph.invoke({"value": "x"}) == {"value": "xA"}
    assert capsys.readouterr().out.splitlines() == [
        f"{BOLD}[values]{OFF} {{'value': 'x'}}",
        f"{BOLD}[updates]{OFF} {{'a': {{'value': 'xA'}}}}",
        f"{BOLD}[values]{OFF} {{'value': 'xA'}}",
    ]


def test_print_mode_prints_without_changing_what_is_streamed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    sub = StateGraph(State).add_node("a", _add("A")).add_edge(START, "a").compile()
    graph = StateGraph(State).add_node("sub", sub).add_edge(START, "sub").compile()
    chunks = list(
        graph.stream({"value": "x"}, stream_mode="values", print_mode="updates", subgraphs=True)
    )
    assert [c[1] for c in chunks if c[0] == ()] == [{"value": "x"}, {"value": "xA"}]
    assert len(chunks) == 4  # the subgraph's values too
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(f"{BOLD}[updates]{OFF} {NS}[graph=('sub:")
    assert lines[0].endswith(f"{OFF} {{'a': {{'value': 'xA'}}}}")
    assert lines[1] == f"{BOLD}[updates]{OFF} {{'sub': {{'value': 'xA'}}}}"


async def test_async_print_mode(capsys: pytest.CaptureFixture[str]) -> None:
    graph = StateGraph(State).add_node("a", _add("A")).add_edge(START, "a").compile()
    assert await graph.ainvoke({"value": "x"}, print_mode=["updates"]) == {"value": "xA"}
    assert capsys.readouterr().out.splitlines() == [
        f"{BOLD}[updates]{OFF} {{'a': {{'value': 'xA'}}}}"
    ]


def test_unknown_print_mode_is_a_clear_error() -> None:
    graph = StateGraph(State).add_node("a", _add("A")).add_edge(START, "a").compile()
    with pytest.raises(ValueError, match="print_mode"):
        graph.invoke({"value": "x"}, print_mode="everything")


def test_debug_logging_marks_steps_and_saves(caplog: pytest.LogCaptureFixture) -> None:
    graph = (
        StateGraph(State)
        .add_node("a", _add("A"))
        .add_edge(START, "a")
        .compile(checkpointer=InMemorySaver())
    )
    with caplog.at_level(logging.DEBUG, logger="stategraph"):
        graph.invoke({"value": "x"}, {"configurable": {"thread_id": "log"}})
    messages = [r.getMessage() for r in caplog.records if r.name == "stategraph.run"]
    assert messages[0] == "run start: graph LangGraph, thread log"
    assert "step 1 start: graph LangGraph, tasks ['a']" in messages
    assert "step 1 end: graph LangGraph" in messages
    assert sum(m.startswith("saver.put: graph LangGraph") for m in messages) == 3
    assert messages[-1] == "run end: graph LangGraph"


def test_invoke_with_another_stream_mode_still_prints(capsys: pytest.CaptureFixture[str]) -> None:
    graph = StateGraph(State).add_node("a", _add("A")).add_edge(START, "a").compile()
    assert graph.invoke({"value": "x"}, stream_mode="updates", print_mode="values") == [
        {"a": {"value": "xA"}}
    ]
    assert capsys.readouterr().out.splitlines() == [
        f"{BOLD}[values]{OFF} {{'value': 'x'}}",
        f"{BOLD}[values]{OFF} {{'value': 'xA'}}",
    ]
