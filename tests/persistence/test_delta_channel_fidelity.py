"""``DeltaChannel`` behaviours matched to LangGraph's (issue 10), on every saver kind and
calling mode: which nodes a run's first step and a fork start, when a delta channel
holds its empty value before any write; a ``Command`` sent to an older checkpoint forks
it instead of changing it (which also changed what the branch built on it showed)."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Annotated, Any

import pytest
from persistence_helpers import Harness, cfg
from typing_extensions import TypedDict

from stategraph.channels import DeltaChannel
from stategraph.channels.last_value import LastValue
from stategraph.checkpoint.serde.types import _DeltaSnapshot
from stategraph.graph import START, StateGraph
from stategraph.pregel import NodeBuilder, Pregel, _checkpoint
from stategraph.pregel._checkpoint import COUNTERS_KEY
from stategraph.types import Command


def flatten(value: list[Any], writes: Sequence[list[Any]]) -> list[Any]:
    return [*value, *(x for w in writes for x in w)]


def producer_consumer(saver: Any, seen: list[list[Any]]) -> Pregel:
    """``make`` turns input ``go`` into a write ``[7]`` to delta channel ``items``;
    ``use`` records every value of ``items`` it is started with."""
    make = NodeBuilder().subscribe_only("go").do(lambda _: [7]).write_to("items")
    use = NodeBuilder().subscribe_only("items").do(lambda items: seen.append(list(items)))
    return Pregel(
        nodes={"make": make, "use": use},
        channels={"go": LastValue(str), "items": DeltaChannel(flatten)},
        input_channels="go",
        output_channels=["items"],
        checkpointer=saver,
    )


def input_checkpoint(h: Harness, graph: Pregel, thread: str) -> dict[str, Any]:
    return next(
        s.config
        for s in h.history(graph, cfg(thread))
        if s.metadata is not None and s.metadata["step"] == -1
    )


def test_first_step_starts_only_subscribers_of_what_the_input_changed(h: Harness) -> None:
    seen: list[list[Any]] = []
    graph = producer_consumer(h.saver, seen)
    h.invoke(graph, "now", cfg("t"))
    # "use" subscribes to a channel that holds [] from the start, but the input did not
    # write it: it runs once, after "make" wrote
    assert seen == [[7]]
    h.invoke(graph, "again", cfg("t"))
    assert seen == [[7], [7, 7]]


def test_input_update_before_the_first_write_starts_only_the_producer(h: Harness) -> None:
    seen: list[list[Any]] = []
    graph = producer_consumer(h.saver, seen)
    h.invoke(graph, "now", cfg("t"))
    fork = h.update_state(graph, input_checkpoint(h, graph, "t"), "now", as_node="__input__")
    assert h.get_state(graph, fork).next == ("make",)
    saved = h.get_tuple(h.saver, fork)
    assert saved is not None
    # the channel's empty value is stored there, so reading it walks no further back
    assert saved.checkpoint["channel_values"]["items"] == _DeltaSnapshot([])
    h.invoke(graph, None, fork)
    assert seen == [[7], [7]]
    assert h.get_state(graph, cfg("t")).values == {"go": "now", "items": [7]}


def test_replay_before_the_first_write_forks_with_only_the_producer_next(
    h: Harness,
) -> None:
    seen: list[list[Any]] = []
    graph = producer_consumer(h.saver, seen)
    h.invoke(graph, "now", cfg("t"))
    h.invoke(graph, None, input_checkpoint(h, graph, "t"), durability="sync")
    assert seen == [[7], [7]]
    forks = [s for s in h.history(graph, cfg("t")) if s.metadata["source"] == "fork"]  # type: ignore[index]
    assert len(forks) == 1
    assert forks[0].next == ("make",)
    assert h.get_state(graph, cfg("t")).values["items"] == [7]


class Paired(TypedDict):
    log: Annotated[list, DeltaChannel(flatten, snapshot_frequency=1000)]
    plain: Annotated[list, operator.add]


def both(*markers: str) -> dict[str, list[str]]:
    return {"log": list(markers), "plain": list(markers)}


def two_steps(saver: Any) -> Any:
    b = StateGraph(Paired)
    b.add_node("first", lambda state: both("first"))
    b.add_node("second", lambda state: both("second"))
    b.add_edge(START, "first")
    b.add_edge("first", "second")
    return b.compile(checkpointer=saver)


@pytest.mark.parametrize(
    "command", [Command(update=both("edit")), Command(goto="first")], ids=["update", "goto"]
)
def test_command_to_an_older_checkpoint_forks_it(h: Harness, command: Command) -> None:
    graph = two_steps(h.saver)
    h.invoke(graph, both("in"), cfg("t"), interrupt_before=["second"])
    paused = h.get_state(graph, cfg("t"))
    h.invoke(graph, None, cfg("t"))
    finished = h.get_state(graph, cfg("t"))
    assert finished.values["log"] == ["in", "first", "second"]

    h.invoke(graph, command, paused.config)

    # the paused checkpoint and the branch that ran from it are as they were
    assert h.get_state(graph, paused.config).values == {
        "log": ["in", "first"],
        "plain": ["in", "first"],
    }
    assert h.get_state(graph, finished.config).values == finished.values
    forks = [s for s in h.history(graph, cfg("t")) if s.metadata["source"] == "fork"]  # type: ignore[index]
    assert len(forks) == 1
    assert forks[0].parent_config is not None
    assert (
        forks[0].parent_config["configurable"]["checkpoint_id"]
        == (paused.config["configurable"]["checkpoint_id"])
    )
    head = h.get_state(graph, cfg("t")).values
    assert head["log"] == head["plain"]
    assert head["log"][:2] == ["in", "first"] and head["log"][-1] == "second"
    # running the paused checkpoint again does not repeat the command
    h.invoke(graph, None, paused.config)
    assert h.get_state(graph, cfg("t")).values["log"] == ["in", "first", "second"]


class WithOther(Paired):
    other: Annotated[list, operator.add]


@pytest.mark.parametrize("edit", [both("edit"), {"other": ["edit"]}], ids=["delta", "plain"])
def test_an_edit_of_an_older_checkpoint_is_not_saved_on_it(
    h: Harness, edit: dict[str, list[str]]
) -> None:
    b = StateGraph(WithOther)
    b.add_node("first", lambda state: both("first"))
    b.add_node("second", lambda state: both("second"))
    b.add_edge(START, "first")
    b.add_edge("first", "second")
    graph = b.compile(checkpointer=h.saver)
    h.invoke(graph, both("in"), cfg("t"), interrupt_before=["second"])
    paused = h.get_state(graph, cfg("t"))
    h.update_state(graph, cfg("t"), both("later"), as_node="first")  # the head moves on
    edited = h.update_state(graph, paused.config, edit, as_node="second")
    assert h.get_state(graph, edited).values["other"] == edit.get("other", [])
    saved = h.get_tuple(h.saver, paused.config)
    assert saved is not None
    assert all("edit" not in repr(w[2]) for w in saved.pending_writes or ())

    # ending the paused checkpoint's tasks does not take the edit as "second"'s result
    cleared = h.update_state(graph, paused.config, None, as_node="__end__")
    assert h.get_state(graph, cleared).values == {
        "log": ["in", "first"],
        "plain": ["in", "first"],
        "other": [],
    }


def test_a_per_thread_subgraph_is_read_and_updated_from_its_task_config(h: Harness) -> None:
    inner = StateGraph(Paired)
    inner.add_node("first", lambda state: both("first"))
    inner.add_node("second", lambda state: both("second"))
    inner.add_edge(START, "first")
    inner.add_edge("first", "second")
    outer = StateGraph(Paired)
    outer.add_node("child", inner.compile(checkpointer=True, interrupt_before=["second"]))
    outer.add_edge(START, "child")
    app = outer.compile(checkpointer=h.saver)
    h.invoke(app, {"log": [], "plain": []}, cfg("t"))
    (task,) = h.get_state(app, cfg("t")).tasks
    assert isinstance(task.state, dict)
    task_ns = task.state["configurable"]["checkpoint_ns"]
    assert task_ns.startswith("child:")  # the task's own namespace...

    # ...reads the subgraph's one state of this thread, saved under "child"
    history = h.history(app, task.state)
    assert [s.values for s in history][:2] == [both("first"), {"log": [], "plain": []}]
    assert {s.config["configurable"]["checkpoint_ns"] for s in history} == {"child"}
    assert h.get_state(app, task.state).next == ("second",)

    updated = h.update_state(app, task.state, both("edit"), as_node="first")
    assert updated["configurable"]["checkpoint_ns"] == "child"
    assert h.get_state(app, task.state).values == both("first", "edit")


def test_exit_durability_stores_the_value_whole_in_its_one_checkpoint(h: Harness) -> None:
    graph = two_steps(h.saver)
    h.invoke(graph, both("in"), cfg("t"), durability="exit")
    saved = [s for s in h.history(graph, cfg("t"))]
    assert len(saved) == 1  # no empty root: the run's end is its one checkpoint
    head = h.get_tuple(h.saver, cfg("t"))
    assert head is not None
    assert head.checkpoint["channel_values"]["log"] == _DeltaSnapshot(["in", "first", "second"])
    assert not head.pending_writes
    h.invoke(graph, both("more"), cfg("t"), durability="exit")
    assert h.get_state(graph, cfg("t")).values["log"] == [
        *["in", "first", "second"],
        *["more", "first", "second"],
    ]


def test_in_memory_async_delta_history_goes_through_the_sync_method() -> None:
    import asyncio

    from stategraph.checkpoint.memory import InMemorySaver

    class Counting(InMemorySaver):
        asked: list[list[str]] = []

        def get_delta_channel_history(self, *, config: Any, channels: Any) -> Any:
            self.asked.append(sorted(channels))
            return super().get_delta_channel_history(config=config, channels=channels)

    saver = Counting()
    graph = two_steps(saver)

    async def run() -> Any:
        await graph.ainvoke(both("in"), cfg("t"))
        Counting.asked.clear()
        await graph.ainvoke(both("again"), cfg("t"))
        return (await graph.aget_state(cfg("t"))).values

    values = asyncio.run(run())
    assert values["log"] == values["plain"]
    assert Counting.asked and all(a == ["log"] for a in Counting.asked)


class TwoLogs(TypedDict):
    busy: Annotated[list, DeltaChannel(flatten, snapshot_frequency=10_000)]
    idle: Annotated[list, DeltaChannel(flatten, snapshot_frequency=10_000)]


def chain(saver: Any, length: int) -> Any:
    """``length`` nodes in a row; each writes ``busy`` only."""
    b = StateGraph(TwoLogs)
    previous = START
    for i in range(length):
        b.add_node(f"n{i}", lambda state, i=i: {"busy": [f"b{i}"]})
        b.add_edge(previous, f"n{i}")
        previous = f"n{i}"
    return b.compile(checkpointer=saver)


def counters(h: Harness, config: dict[str, Any]) -> dict[str, list[int]]:
    saved = h.get_tuple(h.saver, config)
    assert saved is not None
    return {k: list(v) for k, v in (saved.metadata.get(COUNTERS_KEY) or {}).items()}


def test_counters_count_steps_and_checkpoints_since_the_last_snapshot(h: Harness) -> None:
    graph = chain(h.saver, 3)
    h.invoke(graph, {"busy": ["in"], "idle": ["in"]}, cfg("t"))
    # input checkpoint, the step applying the input, then one checkpoint per node
    assert counters(h, cfg("t")) == {"busy": [4, 5], "idle": [1, 5]}
    h.update_state(graph, cfg("t"), None, as_node="__end__")
    assert counters(h, cfg("t")) == {"busy": [4, 6], "idle": [1, 6]}
    h.update_state(graph, cfg("t"), None, as_node="__copy__")  # a copy adds no step
    assert counters(h, cfg("t")) == {"busy": [4, 6], "idle": [1, 6]}


def test_an_idle_channel_is_stored_whole_after_the_superstep_bound(
    h: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_checkpoint, "DELTA_MAX_SUPERSTEPS_SINCE_SNAPSHOT", 4)
    graph = chain(h.saver, 6)
    h.invoke(graph, {"busy": ["in"], "idle": ["in"]}, cfg("t"))
    snapshots = []
    versions = []
    for snapshot in reversed(h.history(graph, cfg("t"))):
        saved = h.get_tuple(h.saver, snapshot.config)
        assert saved is not None
        step = saved.metadata["step"]
        versions.append(saved.checkpoint["channel_versions"].get("idle"))
        if "idle" not in (saved.metadata.get(COUNTERS_KEY) or {}):
            snapshots.append(step)
            assert isinstance(saved.checkpoint["channel_values"]["idle"], _DeltaSnapshot)
    # written once (step 0), then stored whole at every 4th checkpoint since, with a
    # new version each time (a saver stores values only for new versions)
    assert snapshots == [2, 6]
    assert len(set(versions)) == 4  # none at the input, step 0's, and two bumps
    assert h.get_state(graph, cfg("t")).values == {
        "busy": ["in", *(f"b{i}" for i in range(6))],
        "idle": ["in"],
    }
    # a bump that stores the value triggers nothing: the run ended normally
    assert h.get_state(graph, cfg("t")).next == ()


def test_a_channel_never_written_gets_no_version_and_is_never_walked(h: Harness) -> None:
    graph = chain(h.saver, 3)
    h.invoke(graph, {"busy": ["in"]}, cfg("t"))
    for snapshot in h.history(graph, cfg("t")):
        saved = h.get_tuple(h.saver, snapshot.config)
        assert saved is not None
        assert "idle" not in saved.checkpoint["channel_versions"]
    assert h.get_state(graph, cfg("t")).values["idle"] == []


def test_the_snapshot_rule() -> None:
    channel = DeltaChannel(flatten, snapshot_frequency=10)
    channels = {"x": channel}
    bound = _checkpoint.DELTA_MAX_SUPERSTEPS_SINCE_SNAPSHOT
    assert _checkpoint.delta_channels_to_snapshot(channels, {"x": (0, bound)}, {"x": 1}) == {"x"}
    assert not _checkpoint.delta_channels_to_snapshot(channels, {"x": (0, bound - 1)}, {"x": 1})
    assert _checkpoint.delta_channels_to_snapshot(channels, {"x": (10, 0)}, {"x": 1}) == {"x"}
    assert not _checkpoint.delta_channels_to_snapshot(channels, {"x": (10, bound)}, {})
    assert _checkpoint.read_counters({COUNTERS_KEY: {"x": [1, 2], "y": [-1, 0]}}, ["x", "y"]) == {
        "x": [1, 2]
    }
