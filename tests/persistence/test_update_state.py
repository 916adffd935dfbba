"""``update_state`` / ``bulk_update_state`` (and the async twins) through real graphs.

An update writes a new checkpoint (``source="update"``) as if ``as_node`` had returned
the values: reducers merge them and the node's edges decide ``next``. Updating a past
checkpoint forks. Expected values were checked against LangGraph 1.2 as a black box.
"""

from __future__ import annotations

from typing import Any

import pytest
from persistence_helpers import (
    Harness,
    LogState,
    Runs,
    cfg,
    chain_builder,
    cp_id,
    shape,
)

from stategraph.errors import InvalidUpdateError
from stategraph.graph import END, START, StateGraph
from stategraph.types import StateUpdate

FIRST = {"log": ["in"], "last": "in"}
DONE = {"log": ["in", "a", "b", "c"], "last": "c"}


def _ran_chain(h: Harness, runs: Runs | None = None) -> Any:
    graph = chain_builder(runs or Runs()).compile(checkpointer=h.saver)
    assert h.invoke(graph, FIRST, cfg("t"), durability="sync") == DONE
    return graph


def test_update_of_the_latest_checkpoint_goes_through_reducers(h: Harness) -> None:
    graph = _ran_chain(h)
    head = h.history(graph, cfg("t"))[0]
    new_cfg = h.update_state(graph, cfg("t"), {"log": ["U"], "last": "U"})
    assert set(new_cfg["configurable"]) == {"thread_id", "checkpoint_ns", "checkpoint_id"}
    assert new_cfg["configurable"]["thread_id"] == "t"
    snap = h.get_state(graph, cfg("t"))
    assert snap.config == new_cfg
    assert snap.values == {"log": ["in", "a", "b", "c", "U"], "last": "U"}
    assert snap.next == ()  # as the last writer ("c"), whose edge goes to END
    assert snap.metadata == {"source": "update", "step": 4, "parents": {}}
    assert snap.parent_config == head.config
    assert len(h.history(graph, cfg("t"))) == 6
    # a fresh read through another saver on the same storage sees the same thing
    fresh = chain_builder(Runs()).compile(checkpointer=h.new_saver())
    assert h.get_state(fresh, cfg("t")).values == snap.values


def test_as_node_decides_what_runs_next(h: Harness) -> None:
    runs = Runs()
    graph = _ran_chain(h, runs)
    h.update_state(graph, cfg("t"), {"log": ["U"]}, as_node="a")
    snap = h.get_state(graph, cfg("t"))
    assert snap.next == ("b",)
    assert snap.values == {"log": ["in", "a", "b", "c", "U"], "last": "c"}
    assert snap.metadata == {"source": "update", "step": 4, "parents": {}}
    runs.clear()
    out = h.invoke(graph, None, cfg("t"), durability="sync")
    assert out == {"log": ["in", "a", "b", "c", "U", "b", "c"], "last": "c"}
    assert runs.order == ["b", "c"]
    assert shape(h.history(graph, cfg("t"))[:3]) == [
        ("loop", 6, ()),
        ("loop", 5, ("c",)),
        ("update", 4, ("b",)),
    ]


def test_update_of_a_past_checkpoint_forks(h: Harness) -> None:
    runs = Runs()
    graph = _ran_chain(h, runs)
    original = h.history(graph, cfg("t"))
    at_a = original[3]  # step 0, next=("a",)
    fork_cfg = h.update_state(graph, at_a.config, {"log": ["F"], "last": "F"}, as_node="a")
    fork = h.get_state(graph, fork_cfg)
    assert fork.parent_config == at_a.config
    assert fork.values == {"log": ["in", "F"], "last": "F"}
    assert fork.next == ("b",)
    assert fork.metadata == {"source": "update", "step": 1, "parents": {}}
    # the fork is now the thread's head; the old branch is still readable
    assert h.get_state(graph, cfg("t")).config == fork_cfg
    assert h.get_state(graph, original[0].config).values == DONE
    assert h.get_state(graph, at_a.config).values == FIRST
    history = h.history(graph, cfg("t"))
    assert [cp_id(s.config) for s in history[1:]] == [cp_id(s.config) for s in original]
    # continuing the thread runs the fork's later nodes only
    runs.clear()
    out = h.invoke(graph, None, cfg("t"), durability="sync")
    assert out == {"log": ["in", "F", "b", "c"], "last": "c"}
    assert runs.order == ["b", "c"]
    assert h.get_state(graph, original[0].config).values == DONE


def test_running_from_the_config_update_state_returned_writes_no_fork(h: Harness) -> None:
    """``invoke(None, graph.update_state(old, ...))`` continues from the update: the
    update checkpoint is not replayed, so no ``fork`` checkpoint is written (seed 004
    §9.2; LangGraph 1.2 behaves so)."""
    runs = Runs()
    graph = _ran_chain(h, runs)
    at_a = h.history(graph, cfg("t"))[3]
    fork_cfg = h.update_state(graph, at_a.config, {"log": ["F"]}, as_node="a")
    runs.clear()
    out = h.invoke(graph, None, fork_cfg, durability="sync")
    assert out == {"log": ["in", "F", "b", "c"], "last": "c"}
    assert runs.order == ["b", "c"]
    history = h.history(graph, cfg("t"))
    assert shape(history[:3]) == [("loop", 3, ()), ("loop", 2, ("c",)), ("update", 1, ("b",))]
    assert history[1].parent_config == fork_cfg


@pytest.mark.parametrize("as_node", ["__start__", None])
def test_update_of_a_new_thread_acts_as_input(h: Harness, as_node: str | None) -> None:
    runs = Runs()
    graph = chain_builder(runs).compile(checkpointer=h.saver)
    h.update_state(graph, cfg("new"), {"log": ["S"], "last": "S"}, as_node=as_node)
    snap = h.get_state(graph, cfg("new"))
    assert snap.values == {"log": ["S"], "last": "S"}
    assert snap.next == ("a",)
    assert snap.parent_config is None
    out = h.invoke(graph, None, cfg("new"), durability="sync")
    assert out == {"log": ["S", "a", "b", "c"], "last": "c"}
    assert runs.order == ["a", "b", "c"]
    # numbered like an input checkpoint's first step (LangGraph: step 0)
    assert snap.metadata == {"source": "update", "step": 0, "parents": {}}


def _diamond(saver: Any, runs: Runs) -> Any:
    """a -> (b, c) -> d; b and c only append to ``log``; paused before d."""

    def side(name: str) -> Any:
        def node(state: LogState) -> dict[str, Any]:
            runs.hit(name)
            return {"log": [name]}

        return node

    def tail(name: str) -> Any:
        def node(state: LogState) -> dict[str, Any]:
            runs.hit(name)
            return {"log": [name], "last": name}

        return node

    builder = StateGraph(LogState)
    builder.add_node("a", tail("a"))
    builder.add_node("b", side("b"))
    builder.add_node("c", side("c"))
    builder.add_node("d", tail("d"))
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("a", "c")
    builder.add_edge("b", "d")
    builder.add_edge("c", "d")
    builder.add_edge("d", END)
    return builder.compile(checkpointer=saver, interrupt_before=["d"])


def test_update_after_parallel_nodes_needs_as_node(h: Harness) -> None:
    graph = _diamond(h.saver, Runs())
    h.invoke(graph, FIRST, cfg("t"), durability="sync")
    before = h.history(graph, cfg("t"))
    assert before[0].next == ("d",)
    with pytest.raises(InvalidUpdateError, match="as_node"):
        h.update_state(graph, cfg("t"), {"last": "X"})
    assert [s.config for s in h.history(graph, cfg("t"))] == [s.config for s in before]


def test_update_as_an_unknown_node_is_rejected_and_changes_nothing(h: Harness) -> None:
    graph = _ran_chain(h)
    before = h.history(graph, cfg("t"))
    with pytest.raises(InvalidUpdateError, match="nope"):
        h.update_state(graph, cfg("t"), {"log": ["x"]}, as_node="nope")
    assert [s.config for s in h.history(graph, cfg("t"))] == [s.config for s in before]
    assert h.get_state(graph, cfg("t")).values == DONE


def test_bulk_update_state_writes_one_checkpoint_per_superstep(h: Harness) -> None:
    runs = Runs()
    graph = _diamond(h.saver, runs)
    h.invoke(graph, FIRST, cfg("t"), durability="sync")
    head = h.get_state(graph, cfg("t"))
    last = h.bulk_update_state(
        graph,
        cfg("t"),
        [
            [StateUpdate({"log": ["x"]}, "b")],
            [StateUpdate({"log": ["y"]}, "a"), StateUpdate({"log": ["z"]}, "c")],
        ],
    )
    history = h.history(graph, cfg("t"))
    assert history[0].config == last
    # both updates of the second superstep apply as one step: "a" triggers b and c
    # again, "c" triggers d
    assert shape(history[:3]) == [
        ("update", 4, ("b", "c", "d")),
        ("update", 3, ("d",)),
        ("loop", 2, ("d",)),
    ]
    assert history[0].values == {"log": ["in", "a", "b", "c", "x", "y", "z"], "last": "a"}
    assert history[1].values == {"log": ["in", "a", "b", "c", "x"], "last": "a"}
    assert history[1].parent_config == head.config
    assert history[0].parent_config == history[1].config


def test_bulk_update_superstep_obeys_channel_rules(h: Harness) -> None:
    """Two updates of one superstep hit a last-value channel in the same step."""
    graph = _diamond(h.saver, Runs())
    h.invoke(graph, FIRST, cfg("t"), durability="sync")
    before = [s.config for s in h.history(graph, cfg("t"))]
    with pytest.raises(InvalidUpdateError, match="last"):
        h.bulk_update_state(
            graph,
            cfg("t"),
            [[StateUpdate({"last": "p"}, "b"), StateUpdate({"last": "q"}, "c")]],
        )
    assert [s.config for s in h.history(graph, cfg("t"))] == before


def test_bulk_update_state_needs_a_superstep(h: Harness) -> None:
    graph = _ran_chain(h)
    with pytest.raises(ValueError, match="superstep"):
        h.bulk_update_state(graph, cfg("t"), [])


def test_state_api_without_checkpointer_says_what_to_do() -> None:
    graph = chain_builder(Runs()).compile()
    for call in (
        lambda: graph.get_state(cfg("t")),
        lambda: list(graph.get_state_history(cfg("t"))),
        lambda: graph.update_state(cfg("t"), {"log": ["x"]}),
    ):
        with pytest.raises(ValueError, match="checkpointer"):
            call()
