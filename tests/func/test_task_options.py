"""@task / @entrypoint options: timeout, cache_policy; results kept across interrupts."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from stategraph.cache.memory import InMemoryCache
from stategraph.checkpoint.memory import InMemorySaver
from stategraph.errors import NodeTimeoutError
from stategraph.func import entrypoint, task
from stategraph.types import CachePolicy, Command, TimeoutPolicy, interrupt


async def test_task_run_timeout_fails_the_workflow() -> None:
    @task(timeout=0.05)
    async def stuck(x: int) -> int:
        await asyncio.sleep(5)
        return x

    @entrypoint()
    async def flow(x: int) -> int:
        return await stuck(x)

    with pytest.raises(NodeTimeoutError) as info:
        await flow.ainvoke(1)
    assert info.value.node == "stuck" and info.value.kind == "run"


async def test_task_idle_timeout_and_a_fast_task_passes() -> None:
    @task(timeout=TimeoutPolicy(idle_timeout=0.05))
    async def slow(x: int) -> int:
        await asyncio.sleep(1)
        return x

    @task(timeout=TimeoutPolicy(run_timeout=5))
    async def quick(*, idle_timeout: int) -> int:  # a user argument with that name is fine
        return idle_timeout

    @entrypoint()
    async def ok(x: int) -> int:
        return await quick(idle_timeout=x)

    @entrypoint()
    async def late(x: int) -> int:
        return await slow(x)

    assert await ok.ainvoke(7) == 7
    with pytest.raises(NodeTimeoutError) as info:
        await late.ainvoke(1)
    assert info.value.kind == "idle"


async def test_entrypoint_timeout() -> None:
    @entrypoint(timeout=TimeoutPolicy(run_timeout=0.05))
    async def flow(x: int) -> int:
        await asyncio.sleep(5)
        return x

    with pytest.raises(NodeTimeoutError) as info:
        await flow.ainvoke(1)
    assert info.value.node == "flow"


def test_sync_functions_with_timeouts_are_rejected_when_declared() -> None:
    with pytest.raises(ValueError, match="Task 'plain' has a timeout"):

        @task(timeout=1)
        def plain(x: int) -> int:
            return x

    with pytest.raises(ValueError, match="Entrypoint 'flow' has a timeout"):

        @entrypoint(timeout=1)
        def flow(x: int) -> int:
            return x

    with pytest.raises(TypeError, match="timeout must be"):
        task(timeout="soon")(lambda: None)


@pytest.mark.parametrize("is_async", [False, True])
async def test_finished_tasks_are_not_run_again_across_several_interrupts(is_async: bool) -> None:
    runs: list[int] = []

    @task
    def triple(x: int) -> int:
        runs.append(x)
        return 3 * x

    @entrypoint(checkpointer=InMemorySaver())
    def flow(_: Any) -> list[Any]:
        out: list[Any] = []
        for x in (1, 2, 3):
            out += [triple(x).result(), interrupt(f"ok {x}?")]
        return out

    cfg = {"configurable": {"thread_id": f"rep-{is_async}"}}

    async def call(arg: Any) -> Any:
        return await flow.ainvoke(arg, cfg) if is_async else flow.invoke(arg, cfg)

    await call("go")
    await call(Command(resume="a"))
    await call(Command(resume="b"))
    assert await call(Command(resume="c")) == [3, "a", 6, "b", 9, "c"]
    assert runs == [1, 2, 3]


def test_task_cache_policy_reuses_results_across_threads() -> None:
    runs: list[int] = []

    @task(cache_policy=CachePolicy())
    def square(x: int) -> int:
        runs.append(x)
        return x * x

    cache = InMemoryCache()

    @entrypoint(checkpointer=InMemorySaver(), cache=cache)
    def flow(xs: list[int]) -> list[int]:
        return [square(x).result() for x in xs]

    assert flow.invoke([2, 3, 2], {"configurable": {"thread_id": "c1"}}) == [4, 9, 4]
    assert runs == [2, 3]
    assert flow.invoke([3, 2], {"configurable": {"thread_id": "c2"}}) == [9, 4]
    assert runs == [2, 3]
    square.clear_cache(cache)
    assert flow.invoke([3], {"configurable": {"thread_id": "c3"}}) == [9]
    assert runs == [2, 3, 3]


async def test_task_cache_policy_async_with_custom_key() -> None:
    runs: list[str] = []

    @task(cache_policy=CachePolicy(key_func=lambda text: text.lower()))
    async def shout(text: str) -> str:
        runs.append(text)
        return text.upper()

    cache = InMemoryCache()

    @entrypoint(cache=cache)
    async def flow(words: list[str]) -> list[str]:
        return [await shout(w) for w in words]

    assert await flow.ainvoke(["hi", "HI", "yo"]) == ["HI", "HI", "YO"]
    assert runs == ["hi", "yo"]
    await shout.aclear_cache(cache)
    assert await flow.ainvoke(["hi"]) == ["HI"]
    assert runs == ["hi", "yo", "hi"]


def test_a_cache_hit_is_reported_as_cached_with_no_result_event() -> None:
    @task(cache_policy=CachePolicy())
    def double(x: int) -> int:
        return 2 * x

    @entrypoint(cache=InMemoryCache())
    def flow(x: int) -> int:
        return double(x).result()

    first = list(flow.stream(4, stream_mode=["updates", "tasks"]))
    assert ("updates", {"double": 8}) in first
    again = list(flow.stream(4, stream_mode=["updates", "tasks"]))
    # as LangGraph reports a cache hit: the update is marked, the call's start is
    # reported but not a result of its own
    assert ("updates", {"double": 8, "__metadata__": {"cached": True}}) in again
    calls = [data for mode, data in again if mode == "tasks" and data["name"] == "double"]
    assert len(calls) == 1 and "result" not in calls[0]
    assert ("updates", {"flow": 8}) in again


async def test_an_async_cache_hit_is_reported_as_cached() -> None:
    @task(cache_policy=CachePolicy())
    async def double(x: int) -> int:
        return 2 * x

    @entrypoint(cache=InMemoryCache())
    async def flow(x: int) -> int:
        return await double(x)

    assert [c async for c in flow.astream(5)] == [{"double": 10}, {"flow": 10}]
    assert [c async for c in flow.astream(5)] == [
        {"double": 10, "__metadata__": {"cached": True}},
        {"flow": 10},
    ]


def test_task_updates_stream_while_the_entrypoint_runs() -> None:
    first_seen = threading.Event()

    @task
    def first() -> str:
        return "one"

    @task
    def second() -> bool:
        # True only if the caller received the first update while this task runs
        return first_seen.wait(10)

    @entrypoint()
    def flow(_: Any) -> list[Any]:
        return [first().result(), second().result()]

    updates = []
    for chunk in flow.stream({}, stream_mode="updates"):
        updates.append(chunk)
        if "first" in chunk:
            first_seen.set()
    assert updates == [{"first": "one"}, {"second": True}, {"flow": ["one", True]}]


def test_entrypoint_task_input_is_the_value_and_previous_still_arrives() -> None:
    @entrypoint(checkpointer=InMemorySaver())
    def flow(x: int, *, previous: Any = None) -> int:
        return x + (previous or 0)

    c = {"configurable": {"thread_id": "prev"}}
    starts = [ch for ch in flow.stream(5, c, stream_mode="tasks") if "input" in ch]
    assert [(s["name"], s["input"]) for s in starts] == [("flow", 5)]
    assert flow.invoke(1, c) == 6
