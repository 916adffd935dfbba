"""Two runs of one graph without a checkpointer get their own task ids and subgraph
namespaces (as in LangGraph): a UI keyed by task id must not mix two runs' tasks."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from stategraph.graph import START, StateGraph


class Count(TypedDict):
    n: Annotated[int, operator.add]


def _app() -> Any:
    inner = StateGraph(Count)
    inner.add_node("i", lambda s: {"n": 1})
    inner.add_edge(START, "i")
    g = StateGraph(Count)
    g.add_node("a", lambda s: {"n": 1})
    g.add_node("sub", inner.compile())
    g.add_edge(START, "a")
    g.add_edge("a", "sub")
    return g.compile()


def _seen(app: Any) -> tuple[set[str], set[tuple[str, ...]]]:
    ids: set[str] = set()
    namespaces: set[tuple[str, ...]] = set()
    for ns, chunk in app.stream({"n": 0}, stream_mode="tasks", subgraphs=True):
        ids.add(chunk["id"])
        if ns:
            namespaces.add(ns)
    return ids, namespaces


def test_two_runs_without_a_saver_share_no_task_id_or_namespace() -> None:
    app = _app()
    ids1, ns1 = _seen(app)
    ids2, ns2 = _seen(app)
    assert len(ids1) == 3 and len(ids2) == 3  # a, sub, and i inside sub
    assert ns1 and ns2
    assert not ids1 & ids2
    assert not ns1 & ns2


def test_within_one_run_the_ids_are_stable() -> None:
    app = _app()
    events = list(app.stream({"n": 0}, stream_mode="tasks"))
    starts = [e["id"] for e in events if "input" in e]
    results = [e["id"] for e in events if "result" in e]
    assert starts == results  # a task's result names the id its start did
