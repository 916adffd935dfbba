"""TimeoutPolicy: run and idle limits of async nodes, heartbeats, retries."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from typing_extensions import TypedDict

from stategraph.channels import EphemeralValue, LastValue
from stategraph.config import get_stream_writer
from stategraph.errors import NodeTimeoutError
from stategraph.graph import START, StateGraph
from stategraph.pregel import NodeBuilder, Pregel
from stategraph.runtime import Runtime, get_runtime
from stategraph.types import RetryPolicy, TimeoutPolicy


class S(TypedDict, total=False):
    x: int
    out: str


def _graph(node: Any, timeout: Any, retry: RetryPolicy | None = None) -> Any:
    b = StateGraph(S)
    b.add_node("slow", node, timeout=timeout, retry_policy=retry)
    b.add_edge(START, "slow")
    return b.compile()


async def test_run_timeout_raises_node_timeout_error() -> None:
    async def slow(state: S) -> dict[str, Any]:
        await asyncio.sleep(5)
        return {"out": "late"}

    with pytest.raises(NodeTimeoutError) as info:
        await _graph(slow, 0.05).ainvoke({"x": 1})
    err = info.value
    assert err.node == "slow" and err.kind == "run" and err.run_timeout == 0.05
    assert 0.04 < err.elapsed < 2
    assert "Node 'slow' timed out" in str(err)


async def test_fast_node_is_not_affected() -> None:
    async def fast(state: S) -> dict[str, Any]:
        return {"out": "ok"}

    assert await _graph(fast, TimeoutPolicy(run_timeout=1.0, idle_timeout=1.0)).ainvoke(
        {"x": 1}
    ) == {"x": 1, "out": "ok"}


async def test_timeout_is_retried_by_default_retry_policy() -> None:
    attempts = {"n": 0}

    async def sometimes_slow(state: S) -> dict[str, Any]:
        attempts["n"] += 1
        if attempts["n"] == 1:
            await asyncio.sleep(5)
        return {"out": f"attempt {attempts['n']}"}

    graph = _graph(sometimes_slow, 0.05, RetryPolicy(initial_interval=0.001, jitter=False))
    assert (await graph.ainvoke({"x": 1}))["out"] == "attempt 2"


async def test_idle_timeout_refreshed_by_stream_writes() -> None:
    async def chatty(state: S) -> dict[str, Any]:
        writer = get_stream_writer()
        for i in range(6):
            await asyncio.sleep(0.03)
            writer({"tick": i})
        return {"out": "done"}

    graph = _graph(chatty, TimeoutPolicy(idle_timeout=0.1))
    chunks = [c async for c in graph.astream({"x": 1}, stream_mode=["custom", "values"])]
    assert ("custom", {"tick": 5}) in chunks
    assert chunks[-1] == ("values", {"x": 1, "out": "done"})


async def test_idle_timeout_fires_when_silent() -> None:
    async def silent(state: S) -> dict[str, Any]:
        await asyncio.sleep(5)
        return {"out": "never"}

    with pytest.raises(NodeTimeoutError) as info:
        await _graph(silent, TimeoutPolicy(idle_timeout=0.05)).ainvoke({"x": 1})
    assert info.value.kind == "idle"


async def test_heartbeat_mode_only_counts_explicit_heartbeats() -> None:
    async def beating(state: S, runtime: Runtime[Any]) -> dict[str, Any]:
        for _ in range(6):
            await asyncio.sleep(0.03)
            runtime.heartbeat()
        return {"out": "alive"}

    async def writes_only(state: S) -> dict[str, Any]:
        for i in range(6):
            await asyncio.sleep(0.15)
            get_stream_writer()({"tick": i})
        return {"out": "should time out"}

    # beats 0.03 s apart against 0.5 s of idleness allowed: a margin a busy machine keeps
    # (0.1 s failed under load); the writes alone (0.9 s) still outlast it
    policy = TimeoutPolicy(idle_timeout=0.5, refresh_on="heartbeat")
    assert (await _graph(beating, policy).ainvoke({"x": 1}))["out"] == "alive"
    with pytest.raises(NodeTimeoutError):
        await _graph(writes_only, policy).ainvoke({"x": 1})


async def test_get_runtime_heartbeat_is_available() -> None:
    async def node(state: S) -> dict[str, Any]:
        get_runtime().heartbeat()
        return {"out": "ok"}

    assert (await _graph(node, TimeoutPolicy(idle_timeout=1)).ainvoke({"x": 1}))["out"] == "ok"


def test_sync_node_with_timeout_is_rejected_when_built() -> None:
    with pytest.raises(
        ValueError,
        match="Node 'slow' has a timeout, but timeouts are only supported for async nodes",
    ):
        _graph(lambda s: {"out": "x"}, 1.0)
    with pytest.raises(ValueError, match="only supported for async nodes"):
        Pregel(
            nodes={
                "n": NodeBuilder().subscribe_only("a").do(lambda x: x).write_to("b").set_timeout(1)
            },
            channels={"a": EphemeralValue(Any), "b": LastValue(Any)},
            input_channels="a",
            output_channels="b",
        )


def test_timeout_policy_validates_values() -> None:
    with pytest.raises(ValueError, match="run_timeout must be positive"):
        TimeoutPolicy(run_timeout=0)
    from datetime import timedelta

    assert TimeoutPolicy(idle_timeout=timedelta(seconds=2)).idle_timeout == 2.0


async def test_low_level_node_builder_timeout() -> None:
    async def slow(x: Any) -> Any:
        await asyncio.sleep(5)
        return x

    graph = Pregel(
        nodes={"n": NodeBuilder().subscribe_only("a").do(slow).write_to("b").set_timeout(0.05)},
        channels={"a": EphemeralValue(Any), "b": LastValue(Any)},
        input_channels="a",
        output_channels="b",
    )
    with pytest.raises(NodeTimeoutError):
        await graph.ainvoke(1)
