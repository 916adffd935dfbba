"""``restore_channels``: a run shares the graph's empty last-value and ephemeral channels
until it writes them, and never changes the graph's own channels."""

from __future__ import annotations

import operator
import threading
from typing import Annotated, TypedDict

from stategraph.channels import EphemeralValue, LastValue
from stategraph.channels.base import MISSING
from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import END, START, StateGraph
from stategraph.pregel._algo import apply_writes, increment
from stategraph.pregel._loop.fields import WriteBatch
from stategraph.pregel._run_channels import own_channel, restore_channels


class State(TypedDict, total=False):
    a: int
    b: int
    idle: str
    log: Annotated[list[int], operator.add]


def _graph(checkpointer: InMemorySaver | None = None):  # type: ignore[no-untyped-def]
    builder = StateGraph(State)
    builder.add_node("one", lambda s: {"a": s["a"] + 1, "log": [s["a"]]})
    builder.add_node("two", lambda s: {"b": s["a"] * 10, "log": [s["a"]]})
    builder.add_edge(START, "one")
    builder.add_edge("one", "two")
    builder.add_edge("two", END)
    return builder.compile(checkpointer=checkpointer)


def _spec_values(graph) -> dict[str, object]:  # type: ignore[no-untyped-def]
    return {
        k: ch.value  # type: ignore[attr-defined]
        for k, ch in graph.channels.items()
        if type(ch) in (LastValue, EphemeralValue)
    }


def test_runs_leave_the_graph_channels_empty_and_do_not_see_each_other() -> None:
    graph = _graph()
    assert graph.invoke({"a": 1}) == {"a": 2, "b": 20, "log": [1, 2]}
    assert graph.invoke({"a": 5}) == {"a": 6, "b": 60, "log": [5, 6]}
    assert set(_spec_values(graph).values()) == {MISSING}
    assert "idle" in _spec_values(graph)


def test_restored_channels_share_only_the_empty_specs() -> None:
    graph = _graph()
    specs = graph.channels
    channels = restore_channels(graph, {"a": 3, "log": [1]})
    assert list(channels) == list(specs)
    assert channels["a"] is not specs["a"] and channels["a"].get() == 3
    assert channels["log"] is not specs["log"]  # a reducer: always its own
    assert channels["idle"] is specs["idle"]
    own = own_channel(channels, specs, "idle")
    assert own is not specs["idle"] and channels["idle"] is own
    assert own_channel(channels, specs, "idle") is own  # made once
    own.update(["x"])
    assert specs["idle"].value is MISSING  # type: ignore[attr-defined]


def test_apply_writes_gives_a_shared_channel_a_channel_of_its_own_first() -> None:
    graph = _graph()
    specs = graph.channels
    channels = restore_channels(graph, {})
    cp: dict[str, object] = {"channel_versions": {}, "versions_seen": {}}
    batch = WriteBatch([("a", 1), ("idle", "x")])
    updated = apply_writes(cp, channels, [batch], increment, {}, shared=specs)
    assert updated == {"a", "idle"}
    assert channels["a"].get() == 1 and channels["idle"].get() == "x"
    assert channels["b"] is specs["b"]  # not written: still shared
    assert specs["a"].value is MISSING and specs["idle"].value is MISSING  # type: ignore[attr-defined]


def test_resumed_threads_and_concurrent_runs_keep_their_own_state() -> None:
    saver = InMemorySaver()
    graph = _graph(saver)
    results: dict[int, object] = {}

    def work(i: int) -> None:
        cfg = {"configurable": {"thread_id": f"t{i}"}}
        graph.invoke({"a": i}, cfg)
        results[i] = graph.invoke({"a": i + 100}, cfg)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(8):
        # the second run continues the thread: the log keeps the first run's entries
        assert results[i] == {
            "a": i + 101,
            "b": (i + 101) * 10,
            "log": [i, i + 1, i + 100, i + 101],
        }
    assert set(_spec_values(graph).values()) == {MISSING}
