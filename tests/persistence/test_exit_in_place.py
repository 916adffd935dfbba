"""durability="exit" keeps one checkpoint up to date in place and saves it at the end:
what is saved (metadata, parent, values, pending writes) is the same as when every
step's checkpoint is built in full (as it is while ``checkpoints`` are streamed)."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

import pytest

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import END, START, StateGraph
from stategraph.types import interrupt


class State(TypedDict):
    log: Annotated[list[str], operator.add]


def _graph(saver: InMemorySaver, ask: bool = False) -> Any:
    def a(state: State) -> dict[str, list[str]]:
        return {"log": ["a"]}

    def b(state: State) -> dict[str, list[str]]:
        if ask:
            return {"log": [str(interrupt("why?"))]}
        return {"log": ["b"]}

    builder = StateGraph(State)
    builder.add_node("a", a)
    builder.add_node("b", b)
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("b", END)
    return builder.compile(checkpointer=saver)


def _plain(value: Any) -> Any:
    """Interrupts by their value (their ids derive from random checkpoint ids)."""
    if isinstance(value, tuple):
        return tuple(getattr(v, "value", v) for v in value)
    return value


def _saved(saver: InMemorySaver, thread: str) -> list[tuple[Any, ...]]:
    out = []
    for t in saver.list({"configurable": {"thread_id": thread}}):
        md = t.metadata
        parent = (t.parent_config or {}).get("configurable", {}).get("checkpoint_id")
        out.append(
            (
                md["source"],
                md["step"],
                md.get("parents"),
                t.checkpoint["channel_values"].get("log"),
                parent,
                sorted((w[1], _plain(w[2])) for w in t.pending_writes or ()),
            )
        )
    return out


@pytest.mark.parametrize("ask", [False, True])
def test_saved_checkpoints_match_a_run_that_streams_them(ask: bool) -> None:
    results = []
    for modes in (["updates"], ["updates", "checkpoints"]):
        saver = InMemorySaver()
        graph = _graph(saver, ask)
        config = {"configurable": {"thread_id": "t"}}
        for _ in range(2):
            list(graph.stream({"log": ["in"]}, config, durability="exit", stream_mode=modes))
        saved = _saved(saver, "t")
        ids = [t.checkpoint["id"] for t in saver.list(config)]
        # the second run's checkpoint hangs from the first one
        assert saved[0][4] == ids[1]
        assert saved[1][4] is None
        results.append([(*row[:4], row[5]) for row in saved])
    assert results[0] == results[1]
    if ask:
        assert results[0][0][0:2] == ("loop", 4)
        assert results[0][0][4][0][0] == "__interrupt__"
    else:
        assert results[0][0][:4] == ("loop", 6, {}, ["in", "a", "b", "in", "a", "b"])


@pytest.mark.parametrize("ask", [False, True])
def test_in_place_checkpoint_keeps_timestamp_and_updated_channels_of_its_step(ask: bool) -> None:
    """The checkpoint saved at the end carries the time its step ended (read right after
    its id was made, not when the run ends) and the channels that step updated, as the
    last checkpoint of a run saving every step (durability="sync") does."""
    import uuid
    from datetime import datetime, timedelta, timezone

    from stategraph.testing import deterministic

    heads = {}
    for durability in ("exit", "sync"):
        saver = InMemorySaver()
        graph = _graph(saver, ask)
        config = {"configurable": {"thread_id": "t"}}
        with deterministic(tick=timedelta(milliseconds=1)):
            list(graph.stream({"log": ["in"]}, config, durability=durability))
            head = saver.get_tuple(config)
        assert head is not None
        heads[durability] = head.checkpoint
    cp = heads["exit"]
    assert cp["updated_channels"] == heads["sync"]["updated_channels"]
    assert "log" in cp["updated_channels"]
    # the id's time (uuid v6: 60-bit count of 100 ns since 1582-10-15), then one tick
    u = uuid.UUID(cp["id"]).int
    ticks = ((u >> 80) << 12) | ((u >> 64) & 0x0FFF)
    made = datetime(1582, 10, 15, tzinfo=timezone.utc) + timedelta(microseconds=ticks // 10)
    assert datetime.fromisoformat(cp["ts"]) == made + timedelta(milliseconds=1)
