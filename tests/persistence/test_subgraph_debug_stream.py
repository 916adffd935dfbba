"""``checkpoint`` events of the ``debug`` stream match the saved history, subgraphs
included: configs (with ``checkpoint_map`` below the root), parents, next tasks and
the ``state`` a subgraph task points at. Checked against LangGraph 1.2 as a black box.
"""

from __future__ import annotations

import operator
from collections import defaultdict
from typing import Annotated, Any

import pytest
from persistence_helpers import Harness, cfg
from typing_extensions import TypedDict

from stategraph.graph import START, StateGraph


class Trail(TypedDict):
    trail: Annotated[list[str], operator.add]


def two_steps(first: str, second: Any) -> StateGraph:
    builder = StateGraph(Trail).add_node(first, lambda s: {"trail": [first]})
    builder.add_node("inner", second).add_edge(START, first).add_edge(first, "inner")
    return builder


def three_levels(h: Harness) -> Any:
    """top: t1 -> inner(mid: m1 -> inner(low: l1 -> l2))."""
    low = (
        StateGraph(Trail)
        .add_node("l1", lambda s: {"trail": ["l1"]})
        .add_node("l2", lambda s: {"trail": ["l2"]})
        .add_edge(START, "l1")
        .add_edge("l1", "l2")
        .compile()
    )
    mid = two_steps("m1", low).compile()
    return two_steps("t1", mid).compile(checkpointer=h.saver)


def by_namespace(chunks: list[Any]) -> dict[tuple[str, ...], list[dict[str, Any]]]:
    out: dict[tuple[str, ...], list[dict[str, Any]]] = defaultdict(list)
    for ns, event in chunks:
        if event["type"] == "checkpoint":
            out[ns].append(event["payload"])
    return out


@pytest.mark.parametrize("durability", ["sync", "exit"])
def test_checkpoint_events_match_the_saved_history(h: Harness, durability: str) -> None:
    graph = three_levels(h)
    config = cfg(f"debug-{durability}")
    chunks = h.stream(
        graph, {"trail": []}, config, stream_mode="debug", subgraphs=True, durability=durability
    )
    events = by_namespace(chunks)
    assert [len(ns) for ns in events] == [0, 1, 2]
    assert [part.split(":")[0] for part in list(events)[2]] == ["inner", "inner"]

    for ns, payloads in events.items():
        history = h.history(graph, cfg(f"debug-{durability}", checkpoint_ns="|".join(ns)))[::-1]
        if durability == "exit":
            if ns:
                # subgraphs that finished are not saved when only the exit is
                assert history == []
                continue
            payloads = payloads[-1:]
        assert len(payloads) == len(history)
        for event, snap in zip(payloads, history, strict=True):
            assert event["config"] == snap.config
            assert event["parent_config"] == snap.parent_config
            assert event["values"] == snap.values
            assert event["next"] == list(snap.next)
            assert [(t["id"], t["name"], t["state"]) for t in event["tasks"]] == [
                (t.id, t.name, t.state) for t in snap.tasks
            ]


def test_a_subgraph_task_points_at_its_namespace(h: Harness) -> None:
    graph = three_levels(h)
    config = cfg("points")
    chunks = h.stream(graph, {"trail": []}, config, stream_mode="debug")
    last_with_inner = [
        e["payload"]
        for e in chunks
        if e["type"] == "checkpoint" and e["payload"]["next"] == ["inner"]
    ][-1]
    (task,) = last_with_inner["tasks"]
    assert task["state"] == {
        "configurable": {"thread_id": "points", "checkpoint_ns": f"inner:{task['id']}"}
    }
    sub_events = [
        e["payload"]
        for ns, e in h.stream(
            graph, {"trail": []}, cfg("points-2"), stream_mode="debug", subgraphs=True
        )
        if ns and e["type"] == "checkpoint"
    ]
    first = sub_events[0]["config"]["configurable"]
    # a subgraph's config maps each enclosing namespace to the checkpoint it ran from
    assert set(first["checkpoint_map"]) == {"", first["checkpoint_ns"]}
    assert first["checkpoint_map"][first["checkpoint_ns"]] == first["checkpoint_id"]
    assert sub_events[0]["parent_config"] is None  # the subgraph's first checkpoint
