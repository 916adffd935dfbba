"""AsyncBatchedBaseStore: coalescing, error isolation, cancellation, sync bridge."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterable

import pytest

from stategraph.store._batch import AsyncBatchedBaseStore
from stategraph.store.base import InvalidNamespaceError, Op, PutOp, Result
from stategraph.store.memory import InMemoryStore
from stategraph.store.sqlite.aio import AsyncSqliteStore


class CountingStore(AsyncBatchedBaseStore):
    """An async-first store over an InMemoryStore that records each abatch call."""

    def __init__(self, fail_key: str | None = None) -> None:
        super().__init__()
        self.inner = InMemoryStore()
        self.calls: list[list[Op]] = []
        self.fail_key = fail_key
        self.delay = 0.0

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        self.calls.append(ops)
        await asyncio.sleep(self.delay)
        if self.fail_key is not None and any(
            getattr(op, "key", None) == self.fail_key for op in ops
        ):
            raise RuntimeError(f"boom on {self.fail_key}")
        return self.inner.batch(ops)


async def test_hundred_concurrent_agets_make_few_abatch_calls(tmp_path):
    store = AsyncSqliteStore(str(tmp_path / "c.db"))
    try:
        for i in range(100):
            store.put(("a",), f"k{i}", {"i": i})
        calls: list[int] = []
        original = store.abatch

        async def counting(ops: Iterable[Op]) -> list[Result]:
            ops = list(ops)
            calls.append(len(ops))
            return await original(ops)

        store.abatch = counting  # type: ignore[method-assign]
        items = await asyncio.gather(*(store.aget(("a",), f"k{i}") for i in range(100)))
        assert [it.value["i"] for it in items] == list(range(100))
        assert len(calls) < 10
        assert sum(calls) == 100
        assert calls == [100]
    finally:
        await store.aclose()


async def test_mixed_concurrent_calls_get_their_own_results():
    store = CountingStore()
    store.inner.put(("a",), "x", {"v": 1})
    put, got, found, names, deleted = await asyncio.gather(
        store.aput(("b",), "y", {"v": 2}),
        store.aget(("a",), "x"),
        store.asearch(("a",)),
        store.alist_namespaces(),
        store.adelete(("a",), "missing"),
    )
    assert put is None and deleted is None
    assert got.value == {"v": 1}
    assert [r.key for r in found] == ["x"]
    assert names == [("a",), ("b",)]
    assert len(store.calls) == 1
    assert [type(op).__name__ for op in store.calls[0]] == [
        "PutOp",
        "GetOp",
        "SearchOp",
        "ListNamespacesOp",
        "PutOp",
    ]


async def test_calls_during_a_batch_form_the_next_batch():
    store = CountingStore()
    first = asyncio.gather(*(store.aget(("a",), str(i)) for i in range(5)))
    await asyncio.sleep(0)
    second = asyncio.gather(*(store.aget(("a",), str(i)) for i in range(3)))
    await asyncio.gather(first, second)
    assert [len(c) for c in store.calls] == [5, 3]


async def test_failure_is_isolated_to_the_faulty_call():
    store = CountingStore(fail_key="bad")
    results = await asyncio.gather(
        store.aput(("a",), "good", {"v": 1}),
        store.aget(("a",), "bad"),
        store.aget(("a",), "other"),
        return_exceptions=True,
    )
    assert results[0] is None
    assert isinstance(results[1], RuntimeError) and "bad" in str(results[1])
    assert results[2] is None
    assert store.inner.get(("a",), "good").value == {"v": 1}


async def test_validation_errors_raise_at_the_call_site():
    store = CountingStore()
    with pytest.raises(InvalidNamespaceError):
        await store.aput(("a.b",), "k", {"v": 1})
    with pytest.raises(ValueError, match=r"\$regex"):
        await store.asearch(("a",), filter={"v": {"$regex": "x"}})
    assert store.calls == []


async def test_cancelled_call_does_not_break_the_others():
    store = CountingStore()
    store.inner.put(("a",), "k", {"v": 1})
    doomed = asyncio.ensure_future(store.aget(("a",), "k"))
    survivor = asyncio.ensure_future(store.aget(("a",), "k"))
    await asyncio.sleep(0)
    doomed.cancel()
    assert (await survivor).value == {"v": 1}
    with pytest.raises(asyncio.CancelledError):
        await doomed
    assert (await store.aget(("a",), "k")).value == {"v": 1}


async def test_cancelling_the_drain_task_cancels_waiting_callers():
    store = CountingStore()
    store.delay = 30.0
    caller = asyncio.ensure_future(store.aget(("a",), "k"))
    for _ in range(3):
        await asyncio.sleep(0)
    drain = store._batchers[asyncio.get_running_loop()].task
    assert drain is not None and len(store.calls) == 1
    drain.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    store.delay = 0.0
    assert await store.aget(("a",), "k") is None  # the store keeps working


def test_store_works_across_event_loops():
    store = CountingStore()

    async def use(n: int) -> int:
        await store.aput(("a",), str(n), {"v": n})
        return len(await store.asearch(("a",)))

    assert asyncio.run(use(1)) == 1
    assert asyncio.run(use(2)) == 2


def test_finished_event_loops_are_not_kept_alive():
    store = CountingStore()

    async def use() -> None:
        await store.aput(("a",), "k", {"v": 1})

    asyncio.run(use())
    gc.collect()
    assert len(store._batchers) == 0
    assert store.get(("a",), "k").value == {"v": 1}  # sync call: fresh loop


def test_sync_batch_without_running_loop():
    store = CountingStore()
    store.put(("a",), "k", {"v": 1})
    assert store.get(("a",), "k").value == {"v": 1}
    assert len(store.calls) == 2


async def test_sync_batch_from_worker_thread_uses_the_running_loop():
    store = CountingStore()
    await store.aput(("a",), "k", {"v": 1})
    item = await asyncio.to_thread(store.get, ("a",), "k")
    assert item.value == {"v": 1}
    with pytest.raises(RuntimeError, match="async methods"):
        store.batch([PutOp(("a",), "k", None)])
