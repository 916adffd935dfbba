"""A store base class that coalesces concurrent async calls into one ``abatch``.

Each ``aget``/``aput``/``adelete``/``asearch``/``alist_namespaces`` call validates
its operation, puts ``(future, op)`` on a per-event-loop queue and waits. A drain
task, created lazily when the queue goes from empty to non-empty, runs on the next
loop iteration: it takes everything queued so far, calls :meth:`abatch` once, and
resolves the futures. Calls issued while a batch is in flight form the next batch.
So 100 ``aget`` calls started together with ``asyncio.gather`` cost one ``abatch``.

If a coalesced batch fails, each of its operations is retried alone so that only
the caller whose operation is at fault sees the error.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from stategraph.store.base import (
    BaseStore,
    Op,
    Result,
    validate_op,
)

if TYPE_CHECKING:
    import asyncio

__all__ = ["AsyncBatchedBaseStore"]


class _LoopBatcher:
    """The queue and drain task of one store on one event loop."""

    __slots__ = ("pending", "store", "task")

    def __init__(self, store: AsyncBatchedBaseStore) -> None:
        # No reference to the loop: it is this object's key in a WeakKeyDictionary.
        self.store = store
        self.pending: list[tuple[asyncio.Future[Any], Op]] = []
        self.task: asyncio.Task[None] | None = None

    def submit(self, op: Op, loop: asyncio.AbstractEventLoop) -> asyncio.Future[Any]:
        fut: asyncio.Future[Any] = loop.create_future()
        self.pending.append((fut, op))
        if self.task is None:
            self.task = loop.create_task(self._drain())
        return fut

    async def _drain(self) -> None:
        items: list[tuple[asyncio.Future[Any], Op]] = []
        try:
            while self.pending:
                items, self.pending = self.pending, []
                items = [(fut, op) for fut, op in items if not fut.done()]
                if items:
                    await self._flush(items)
                items = []
        except BaseException:
            for fut, _ in items + self.pending:
                fut.cancel()
            self.pending = []
            raise
        finally:
            self.task = None

    async def _flush(self, items: list[tuple[asyncio.Future[Any], Op]]) -> None:
        try:
            results = await self.store.abatch([op for _, op in items])
        except Exception as exc:
            if len(items) == 1:
                if not items[0][0].done():
                    items[0][0].set_exception(exc)
                return
            for fut, op in items:
                try:
                    result = (await self.store.abatch([op]))[0]
                except Exception as single_exc:
                    if not fut.done():
                        fut.set_exception(single_exc)
                else:
                    if not fut.done():
                        fut.set_result(result)
            return
        for (fut, _), result in zip(items, results, strict=True):
            if not fut.done():
                fut.set_result(result)


class AsyncBatchedBaseStore(BaseStore):
    """Base class for async-first stores: implement :meth:`abatch` (and optionally
    :meth:`batch`); the async convenience methods are coalesced into batches.

    The default :meth:`batch` runs :meth:`abatch` on the loop the store was last
    used from (when called from another thread), or on a fresh loop.
    """

    def __init__(self) -> None:
        self._batchers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopBatcher] = (
            weakref.WeakKeyDictionary()
        )
        self._batchers_lock = threading.Lock()
        self._last_loop: weakref.ref[asyncio.AbstractEventLoop] | None = None

    def _submit(self, op: Op) -> asyncio.Future[Any]:
        import asyncio

        validate_op(op)
        loop = asyncio.get_running_loop()
        batcher = self._batchers.get(loop)
        if batcher is None:
            with self._batchers_lock:
                batcher = self._batchers.setdefault(loop, _LoopBatcher(self))
        self._last_loop = weakref.ref(loop)
        return batcher.submit(op, loop)

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run :meth:`abatch` from synchronous code.

        From a worker thread while the store's event loop runs, the batch is sent to
        that loop; with no loop running in this thread, a fresh loop is used.
        """
        import asyncio

        ops = list(ops)
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            raise RuntimeError(
                f"Synchronous {type(self).__name__} methods cannot run inside the event "
                f"loop: use the async methods (aget, aput, asearch, ...) there."
            )
        loop = None if self._last_loop is None else self._last_loop()
        if loop is not None and loop.is_running() and not loop.is_closed():
            return asyncio.run_coroutine_threadsafe(self.abatch(ops), loop).result()
        return asyncio.run(self.abatch(ops))

    async def _arun(self, op: Op) -> Any:
        """Coalesce ``op`` with the other operations queued on this event loop."""
        return await self._submit(op)
