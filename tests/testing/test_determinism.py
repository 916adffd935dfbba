"""Deterministic ids and clock."""

from __future__ import annotations

import operator
from datetime import datetime, timedelta, timezone
from typing import Annotated

import pytest
from typing_extensions import TypedDict

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import START, StateGraph, add_messages
from stategraph.messages import HumanMessage
from stategraph.testing import DeterministicSource, deterministic


class State(TypedDict):
    log: Annotated[list[str], operator.add]
    messages: Annotated[list, add_messages]


def run_once() -> list[tuple[str, str, str]]:
    b = StateGraph(State)
    b.add_node("a", lambda s: {"log": ["a"], "messages": [HumanMessage("hi")]})
    b.add_node("b", lambda s: {"log": ["b"]})
    b.add_edge(START, "a")
    b.add_edge("a", "b")
    graph = b.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    out = graph.invoke({"log": [], "messages": []}, config)
    history = list(graph.get_state_history(config))
    return [
        (s.config["configurable"]["checkpoint_id"], s.created_at, out["messages"][0].id)
        for s in history
    ]


def test_same_ids_and_timestamps_on_every_run():
    with deterministic():
        first = run_once()
    with deterministic():
        second = run_once()
    assert first == second
    assert first[-1][1].startswith("2024-01-01T00:00:00")
    assert run_once() != first  # outside the block ids are random again


def test_start_tick_and_seed():
    start = datetime(2030, 5, 6, 7, 8, 9, tzinfo=timezone.utc)
    with deterministic(start=start, tick=timedelta(seconds=1), seed=7) as source:
        assert isinstance(source, DeterministicSource)
        history = run_once()
    stamps = sorted(h[1] for h in history)
    assert stamps[0].startswith("2030-05-06T07:08:")
    with deterministic(seed=8):
        other = run_once()
    assert [h[0] for h in other] != [h[0] for h in history]


def test_bad_settings_are_rejected():
    with pytest.raises(ValueError, match="timezone-aware"):
        DeterministicSource(start=datetime(2024, 1, 1))
    with pytest.raises(ValueError, match="tick must be positive"):
        DeterministicSource(tick=timedelta(0))
