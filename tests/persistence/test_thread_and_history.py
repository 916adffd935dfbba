"""Threads, checkpoint history, snapshots and replay through real graphs.

Expected shapes were checked against LangGraph 1.2 as a black box (seed 003 / 000
§18.4 / 004 parts 6 and 9): a 3-node chain leaves one ``input`` checkpoint at step -1
and ``loop`` checkpoints 0..3, parents linked, listed newest first.
"""

from __future__ import annotations

from datetime import datetime
from itertools import pairwise

import pytest
from persistence_helpers import (
    Harness,
    Runs,
    cfg,
    chain_builder,
    cp_id,
    shape,
)

from stategraph.graph import END, START, StateGraph
from stategraph.types import Command, Interrupt, PregelTask, interrupt

CHAIN_SHAPE = [
    ("loop", 3, ()),
    ("loop", 2, ("c",)),
    ("loop", 1, ("b",)),
    ("loop", 0, ("a",)),
    ("input", -1, ("__start__",)),
]
CHAIN_VALUES = [
    {"log": ["in", "a", "b", "c"], "last": "c"},
    {"log": ["in", "a", "b"], "last": "b"},
    {"log": ["in", "a"], "last": "a"},
    {"log": ["in"], "last": "in"},
    {"log": []},
]
FIRST = {"log": ["in"], "last": "in"}


def test_compile_attaches_the_checkpointer(h: Harness) -> None:
    graph = chain_builder(Runs()).compile(checkpointer=h.saver)
    assert graph.checkpointer is h.saver


@pytest.mark.parametrize(
    "config",
    [None, {}, {"configurable": {}}, {"configurable": {"checkpoint_ns": ""}}],
    ids=["none", "empty", "no-configurable-keys", "ns-only"],
)
def test_run_without_thread_id_fails_naming_thread_id(h: Harness, config: object) -> None:
    runs = Runs()
    graph = chain_builder(runs).compile(checkpointer=h.saver)
    with pytest.raises(ValueError, match="thread_id"):
        h.invoke(graph, FIRST, config)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="thread_id"):
        h.stream(graph, FIRST, config)  # type: ignore[arg-type]
    assert runs.snapshot() == {}


@pytest.mark.parametrize("durability", ["sync", "async", None], ids=["sync", "async", "default"])
def test_three_node_chain_history_shape(h: Harness, durability: str | None) -> None:
    graph = chain_builder(Runs()).compile(checkpointer=h.saver)
    kw = {} if durability is None else {"durability": durability}
    out = h.invoke(graph, FIRST, cfg("t"), **kw)
    assert out == CHAIN_VALUES[0]
    history = h.history(graph, cfg("t"))
    assert shape(history) == CHAIN_SHAPE
    assert [s.values for s in history] == CHAIN_VALUES
    assert [s.metadata for s in history] == [
        {"source": src, "step": step, "parents": {}} for src, step, _ in CHAIN_SHAPE
    ]
    ids = [cp_id(s.config) for s in history]
    assert len(set(ids)) == 5
    assert ids == sorted(ids, reverse=True)  # newest (highest uuid6) first
    for newer, older in pairwise(history):
        assert newer.parent_config == older.config
    assert history[-1].parent_config is None
    for snap in history:
        assert snap.config["configurable"]["thread_id"] == "t"
        assert snap.config["configurable"]["checkpoint_ns"] == ""
    stamps = [datetime.fromisoformat(s.created_at) for s in history]  # type: ignore[arg-type]
    assert all(ts.utcoffset() is not None for ts in stamps)
    assert stamps == sorted(stamps, reverse=True)
    # the latest snapshot is the head of the history
    latest = h.get_state(graph, cfg("t"))
    assert latest.config == history[0].config
    assert latest.values == CHAIN_VALUES[0]


def test_history_tasks_show_each_step_and_its_result(h: Harness) -> None:
    graph = chain_builder(Runs()).compile(checkpointer=h.saver)
    h.invoke(graph, FIRST, cfg("t"), durability="sync")
    history = h.history(graph, cfg("t"))
    assert history[0].tasks == ()
    # a past checkpoint lists the task that ran from it and what that task returned
    got = [
        [(t.name, t.path, t.error, t.interrupts, t.result) for t in s.tasks] for s in history[1:]
    ]
    assert got == [
        [("c", ("__pregel_pull", "c"), None, (), {"log": ["c"], "last": "c"})],
        [("b", ("__pregel_pull", "b"), None, (), {"log": ["b"], "last": "b"})],
        [("a", ("__pregel_pull", "a"), None, (), {"log": ["a"], "last": "a"})],
        [("__start__", ("__pregel_pull", "__start__"), None, (), FIRST)],
    ]


def test_user_metadata_is_recorded_on_every_checkpoint(h: Harness) -> None:
    graph = chain_builder(Runs()).compile(checkpointer=h.saver)
    run_cfg = {**cfg("t"), "metadata": {"user": "u1", "attempt": 3}}
    h.invoke(graph, FIRST, run_cfg, durability="sync")
    history = h.history(graph, cfg("t"))
    assert [s.metadata for s in history] == [
        {"source": src, "step": step, "parents": {}, "user": "u1", "attempt": 3}
        for src, step, _ in CHAIN_SHAPE
    ]
    assert len(h.history(graph, cfg("t"), filter={"user": "u1"})) == 5
    assert h.history(graph, cfg("t"), filter={"user": "someone else"}) == []


def test_new_input_on_a_thread_continues_from_its_state(h: Harness) -> None:
    runs = Runs()
    graph = chain_builder(runs).compile(checkpointer=h.saver)
    h.invoke(graph, FIRST, cfg("t"), durability="sync")
    first_ids = [cp_id(s.config) for s in h.history(graph, cfg("t"))]
    out = h.invoke(graph, {"log": ["in2"], "last": "in2"}, cfg("t"), durability="sync")
    # the reducer keeps merging; the last-value channel is overwritten
    assert out == {"log": ["in", "a", "b", "c", "in2", "a", "b", "c"], "last": "c"}
    assert runs.snapshot() == {"a": 2, "b": 2, "c": 2}
    history = h.history(graph, cfg("t"))
    assert shape(history)[:5] == [
        ("loop", 8, ()),
        ("loop", 7, ("c",)),
        ("loop", 6, ("b",)),
        ("loop", 5, ("a",)),
        ("input", 4, ("__start__",)),
    ]
    assert history[4].values == {"log": ["in", "a", "b", "c"], "last": "c"}
    assert history[4].parent_config == history[5].config
    assert [cp_id(s.config) for s in history[5:]] == first_ids
    assert [s.values for s in history[5:]] == CHAIN_VALUES


def test_threads_are_isolated(h: Harness) -> None:
    graph = chain_builder(Runs()).compile(checkpointer=h.saver)
    h.invoke(graph, FIRST, cfg("one"), durability="sync")
    h.invoke(graph, {"log": ["x"], "last": "x"}, cfg("two"), durability="sync")
    assert h.get_state(graph, cfg("one")).values == CHAIN_VALUES[0]
    assert h.get_state(graph, cfg("two")).values == {"log": ["x", "a", "b", "c"], "last": "c"}
    assert len(h.history(graph, cfg("one"))) == 5
    assert len(h.history(graph, cfg("two"))) == 5


def test_get_state_of_an_unknown_thread_is_empty(h: Harness) -> None:
    graph = chain_builder(Runs()).compile(checkpointer=h.saver)
    snap = h.get_state(graph, cfg("nobody"))
    assert snap.values == {}
    assert snap.next == ()
    assert snap.config["configurable"]["thread_id"] == "nobody"
    assert cp_id(snap.config) is None
    assert (snap.metadata, snap.created_at, snap.parent_config) == (None, None, None)
    assert (snap.tasks, snap.interrupts) == ((), ())
    assert h.history(graph, cfg("nobody")) == []


def _review_graph(saver: object, runs: Runs) -> object:
    from persistence_helpers import LogState, logging_node

    def review(state: LogState) -> dict[str, object]:
        runs.hit("review")
        answer = interrupt({"ask": state["log"][-1]})
        return {"log": [f"review:{answer}"], "last": "review"}

    builder = StateGraph(LogState)
    builder.add_node("a", logging_node("a", runs))
    builder.add_node("review", review)
    builder.add_edge(START, "a")
    builder.add_edge("a", "review")
    builder.add_edge("review", END)
    return builder.compile(checkpointer=saver)


def test_get_state_snapshot_fields_at_an_interrupt(h: Harness) -> None:
    runs = Runs()
    graph = _review_graph(h.saver, runs)
    out = h.invoke(graph, FIRST, cfg("t"), durability="sync")
    assert out["log"] == ["in", "a"]
    [intr] = out["__interrupt__"]
    assert intr.value == {"ask": "a"}
    snap = h.get_state(graph, cfg("t"))
    history = h.history(graph, cfg("t"))
    assert snap.values == {"log": ["in", "a"], "last": "a"}
    assert snap.next == ("review",)
    assert snap.config == history[0].config
    assert set(snap.config["configurable"]) == {"thread_id", "checkpoint_ns", "checkpoint_id"}
    assert snap.metadata == {"source": "loop", "step": 1, "parents": {}}
    assert datetime.fromisoformat(snap.created_at).utcoffset() is not None  # type: ignore[arg-type]
    assert snap.parent_config == history[1].config
    [task] = snap.tasks
    assert isinstance(task, PregelTask)
    assert (task.name, task.path, task.error, task.state, task.result) == (
        "review",
        ("__pregel_pull", "review"),
        None,
        None,
        None,
    )
    assert task.interrupts == (Interrupt(value={"ask": "a"}, id=intr.id),)
    assert snap.interrupts == task.interrupts
    # answering clears next, tasks and interrupts
    final = h.invoke(graph, Command(resume="ok"), cfg("t"), durability="sync")
    assert final == {"log": ["in", "a", "review:ok"], "last": "review"}
    done = h.get_state(graph, cfg("t"))
    assert (done.next, done.tasks, done.interrupts) == ((), (), ())
    assert runs.snapshot() == {"a": 1, "review": 2}


def test_get_state_by_checkpoint_id(h: Harness) -> None:
    graph = chain_builder(Runs()).compile(checkpointer=h.saver)
    h.invoke(graph, FIRST, cfg("t"), durability="sync")
    history = h.history(graph, cfg("t"))
    for i, snap in enumerate(history):
        again = h.get_state(graph, snap.config)
        assert again.config == snap.config
        assert again.values == CHAIN_VALUES[i]
        assert again.next == CHAIN_SHAPE[i][2]
        assert again.metadata == snap.metadata
        assert again.parent_config == snap.parent_config


def test_history_filter_before_and_limit(h: Harness) -> None:
    graph = chain_builder(Runs()).compile(checkpointer=h.saver)
    h.invoke(graph, FIRST, cfg("t"), durability="sync")
    history = h.history(graph, cfg("t"))

    def steps(**kw: object) -> list[int]:
        return [s.metadata["step"] for s in h.history(graph, cfg("t"), **kw)]  # type: ignore[index]

    assert steps(limit=2) == [3, 2]
    assert steps(limit=0) == []
    assert steps(before=history[2].config) == [0, -1]
    assert steps(before=history[2].config, limit=1) == [0]
    assert steps(filter={"source": "input"}) == [-1]
    assert steps(filter={"source": "loop"}, limit=3) == [3, 2, 1]
    assert steps(filter={"step": 1}) == [1]
    assert steps(filter={"source": "loop"}, before=history[1].config) == [1, 0]


# ---------------------------------------------------------------------- replay


def test_replay_from_a_checkpoint_reruns_only_later_nodes(h: Harness) -> None:
    runs = Runs()
    graph = chain_builder(runs).compile(checkpointer=h.saver)
    h.invoke(graph, FIRST, cfg("t"), durability="sync")
    original = h.history(graph, cfg("t"))
    at_b = original[2]  # step 1, next=("b",)
    runs.clear()
    out = h.invoke(graph, None, at_b.config, durability="sync")
    assert out == CHAIN_VALUES[0]
    assert runs.order == ["b", "c"]  # "a" is before the checkpoint: not re-run
    history = h.history(graph, cfg("t"))
    assert shape(history[:3]) == [("loop", 4, ()), ("loop", 3, ("c",)), ("fork", 2, ("b",))]
    fork = history[2]
    # the fork copies the replayed checkpoint and is parented on it
    assert fork.parent_config == at_b.config
    assert fork.values == at_b.values
    assert history[1].parent_config == fork.config
    assert history[0].parent_config == history[1].config
    assert h.get_state(graph, cfg("t")).config == history[0].config
    # the old branch is intact
    assert [cp_id(s.config) for s in history[3:]] == [cp_id(s.config) for s in original]
    assert [s.values for s in history[3:]] == CHAIN_VALUES
    assert h.get_state(graph, original[0].config).values == CHAIN_VALUES[0]


def test_replay_from_the_input_checkpoint_reruns_every_node(h: Harness) -> None:
    runs = Runs()
    graph = chain_builder(runs).compile(checkpointer=h.saver)
    h.invoke(graph, FIRST, cfg("t"), durability="sync")
    oldest = h.history(graph, cfg("t"))[-1]
    runs.clear()
    out = h.invoke(graph, None, oldest.config, durability="sync")
    assert out == CHAIN_VALUES[0]
    assert runs.order == ["a", "b", "c"]
    history = h.history(graph, cfg("t"))
    # the fork of the input checkpoint (step -1) is step 0; the replayed
    # __start__ task then makes step 1, "a" step 2 ...
    assert shape(history[:5]) == [
        ("loop", 4, ()),
        ("loop", 3, ("c",)),
        ("loop", 2, ("b",)),
        ("loop", 1, ("a",)),
        ("fork", 0, ("__start__",)),
    ]
    assert [s.values for s in history[:5]] == CHAIN_VALUES
    assert history[4].parent_config == oldest.config
    assert len(history) == 10


def test_replay_of_the_final_checkpoint_runs_nothing(h: Harness) -> None:
    runs = Runs()
    graph = chain_builder(runs).compile(checkpointer=h.saver)
    h.invoke(graph, FIRST, cfg("t"), durability="sync")
    final = h.history(graph, cfg("t"))[0]
    runs.clear()
    assert h.invoke(graph, None, final.config, durability="sync") == CHAIN_VALUES[0]
    assert runs.order == []
    history = h.history(graph, cfg("t"))
    assert shape(history[:2]) == [("fork", 4, ()), ("loop", 3, ())]
    assert history[0].parent_config == final.config
