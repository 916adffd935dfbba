"""The asyncio SQLite store: :class:`~stategraph.store.sqlite.SqliteStore` on a worker thread.

Database work runs on one dedicated thread, in submission order, so the event loop
never blocks on SQLite. Concurrent ``aget``/``aput``/``asearch`` calls are coalesced
into single batches by :class:`~stategraph.store._batch.AsyncBatchedBaseStore`.
Async embedding functions are awaited on the event loop; synchronous ones run in a
thread.

Example::

    async with AsyncSqliteStore.from_conn_string("memory.db") as store:
        await store.aput(("users", "alice"), "prefs", {"theme": "dark"})
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from stategraph.store._batch import AsyncBatchedBaseStore
from stategraph.store._engine import aembed_plan, make_plan
from stategraph.store.base import IndexConfig, Op, Result, TTLConfig
from stategraph.store.sqlite import SqliteStore

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

__all__ = ["AsyncSqliteStore"]

T = TypeVar("T")


class AsyncSqliteStore(AsyncBatchedBaseStore):
    """A SQLite store for asyncio code (same arguments as :class:`SqliteStore`).

    The synchronous methods also work (they run on the calling thread), which lets
    sync nodes of an async graph share the store.
    """

    supports_ttl = True

    def __init__(
        self,
        conn: sqlite3.Connection | str | os.PathLike[str],
        *,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        busy_timeout_ms: int = 5000,
    ) -> None:
        super().__init__()
        self.sync_store = SqliteStore(conn, index=index, ttl=ttl, busy_timeout_ms=busy_timeout_ms)
        """The underlying synchronous store (shares the connection)."""
        self.ttl_config = self.sync_store.ttl_config
        self.index_config = index
        self._executor: ThreadPoolExecutor | None = None
        self._executor_lock = threading.Lock()

    @property
    def conn(self) -> sqlite3.Connection:
        """The SQLite connection."""
        return self.sync_store.conn

    @property
    def _now(self) -> Callable[[], float]:
        """Clock in epoch seconds (delegates to the underlying store; tests replace it)."""
        return self.sync_store._now

    @_now.setter
    def _now(self, clock: Callable[[], float]) -> None:
        self.sync_store._now = clock

    @classmethod
    @asynccontextmanager
    async def from_conn_string(
        cls,
        conn_string: str,
        *,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
    ) -> AsyncIterator[AsyncSqliteStore]:
        """Open a store on the database at ``conn_string`` and close it on exit."""
        store = cls(conn_string, index=index, ttl=ttl)
        try:
            await store.setup()
            yield store
        finally:
            await store.aclose()

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        import asyncio

        if self._executor is None:
            with self._executor_lock:
                if self._executor is None:
                    from concurrent.futures import ThreadPoolExecutor

                    self._executor = ThreadPoolExecutor(
                        max_workers=1, thread_name_prefix="stategraph-sqlite-store"
                    )
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)

    async def setup(self) -> None:
        """Create or migrate the tables (idempotent; called automatically)."""
        await self._run(self.sync_store.setup)

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Execute ``ops`` synchronously on the calling thread."""
        return self.sync_store.batch(ops)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Execute ``ops`` in order on the store's worker thread."""
        store = self.sync_store
        plan = make_plan(ops, store._index)
        vectors = await aembed_plan(plan, store._index)
        return await self._run(store._execute, plan, vectors)

    def sweep_ttl(self) -> int:
        """Delete expired items now; return how many were deleted."""
        return self.sync_store.sweep_ttl()

    async def asweep_ttl(self) -> int:
        """Async twin of :meth:`sweep_ttl` (runs on the worker thread)."""
        return await self._run(self.sync_store.sweep_ttl)

    def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> None:
        """Start the background sweeper thread (see :meth:`SqliteStore.start_ttl_sweeper`)."""
        self.sync_store.start_ttl_sweeper(sweep_interval_minutes)

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the background sweeper thread; True once it has ended."""
        return self.sync_store.stop_ttl_sweeper(timeout)

    def close(self) -> None:
        """Stop the worker thread and the sweeper; close the connection if owned."""
        executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True)
        self.sync_store.close()

    async def aclose(self) -> None:
        """Async twin of :meth:`close` (waits for queued work without blocking the loop)."""
        import asyncio

        await asyncio.to_thread(self.close)
