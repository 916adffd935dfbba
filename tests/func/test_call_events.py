"""``@task`` calls show up in ``astream_events`` as runs of their own, nested in the
entrypoint's run (checked black-box against LangGraph 1.2: names, tags, metadata,
parents, input and output)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.func import entrypoint, task


def _workflow(use_async: bool) -> Any:
    if use_async:

        @task
        async def halve(amount: int, *, exact: bool = False) -> float:
            return amount / 2

        @task
        async def reject(amount: int) -> int:
            raise RuntimeError("no")

        @entrypoint(checkpointer=InMemorySaver())
        async def budget(amount: int) -> float:
            first = await halve(amount)
            try:
                await reject(amount)
            except RuntimeError:
                pass
            return first + await halve(amount, exact=True)

        return budget

    @task
    def halve_sync(amount: int, *, exact: bool = False) -> float:
        return amount / 2

    @task
    def reject_sync(amount: int) -> int:
        raise RuntimeError("no")

    @entrypoint(checkpointer=InMemorySaver())
    def budget_sync(amount: int) -> float:
        first = halve_sync(amount).result()
        try:
            reject_sync(amount).result()
        except RuntimeError:
            pass
        return first + halve_sync(amount, exact=True).result()

    return budget_sync


@pytest.mark.parametrize("use_async", [True, False])
def test_calls_are_runs_nested_in_the_entrypoint(use_async: bool) -> None:
    app = _workflow(use_async)
    half = "halve" if use_async else "halve_sync"
    refuse = "reject" if use_async else "reject_sync"
    node = "budget" if use_async else "budget_sync"
    cfg = {"configurable": {"thread_id": "events"}}

    async def collect() -> list[dict[str, Any]]:
        return [e async for e in app.astream_events(10, cfg, version="v2")]

    events = asyncio.run(collect())
    root = next(e for e in events if e["event"] == "on_chain_start" and not e["parent_ids"])
    entry = next(e for e in events if e["event"] == "on_chain_start" and e["name"] == node)
    assert entry["parent_ids"] == [root["run_id"]]
    calls = [e for e in events if e["name"] == half]
    assert [e["event"] for e in calls] == ["on_chain_start", "on_chain_stream", "on_chain_end"] * 2
    assert [e["data"].get("input") for e in calls if e["event"] == "on_chain_start"] == [
        {"amount": 10},
        {"amount": 10, "exact": True},
    ]
    assert [e["data"]["chunk"] for e in calls if e["event"] == "on_chain_stream"] == [5.0, 5.0]
    assert [e["data"]["output"] for e in calls if e["event"] == "on_chain_end"] == [5.0, 5.0]
    starts = [e for e in calls if e["event"] == "on_chain_start"]
    indices = []
    for event in starts:
        assert event["tags"] == ["seq:step:1"]
        assert event["parent_ids"] == [root["run_id"], entry["run_id"]]
        meta = event["metadata"]
        assert meta["langgraph_node"] == half
        assert meta["langgraph_triggers"] == ("__pregel_push",)
        assert meta["langgraph_step"] == entry["metadata"]["langgraph_step"]
        path = meta["langgraph_path"]
        assert path[0] == "__pregel_push" and path[1] == ("__pregel_pull", node)
        assert path[-1] is True
        indices.append(path[2])
        assert meta["langgraph_checkpoint_ns"].startswith(
            entry["metadata"]["langgraph_checkpoint_ns"] + f"|{half}:"
        )
        assert meta["thread_id"] == "events"
    # each call has its place in the entrypoint's sequence of calls (the failed one between)
    assert indices == [0, 2]
    # the two calls of one function are two runs
    assert len({e["run_id"] for e in starts}) == 2
    # the failing call starts and ends without output events
    failed = [e for e in events if e["name"] == refuse]
    assert [e["event"] for e in failed] == ["on_chain_start"]
    order = [(e["event"], e["name"]) for e in events]
    assert order.index(("on_chain_start", node)) < order.index(("on_chain_start", half))
    last_call = len(order) - 1 - order[::-1].index(("on_chain_end", half))
    assert order.index(("on_chain_end", node)) > last_call
