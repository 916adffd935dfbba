"""``AsyncSqliteSaver``: the SQLite saver for asyncio programs, with no extra dependency.

It wraps a :class:`~stategraph.checkpoint.sqlite.SqliteSaver` (same tables, same file
format: the two can share a database) and runs every async call on one dedicated
worker thread, so the event loop never blocks on SQLite and calls reach the
connection one at a time, in the order they were awaited.

Sync methods: called from a thread with no running event loop (for example the
worker threads of a sync graph run) they work, going straight to the thread-safe
core. Called from inside a running event loop they raise, because they would block
the loop: use the ``a``-prefixed methods there.

Departure from LangGraph: the constructor takes a :class:`sqlite3.Connection`, not an
``aiosqlite`` one, because stategraph adds no dependency for this.
"""

from __future__ import annotations

import asyncio
import functools
import sqlite3
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from stategraph.checkpoint._batched import SaverCall, perform_batched
from stategraph.checkpoint._ids import next_string_version
from stategraph.checkpoint._retention import TTLConfig
from stategraph.checkpoint._twins import off_loop, on_worker, on_worker_iter
from stategraph.checkpoint._util import refuse_in_event_loop
from stategraph.checkpoint.base import (
    BaseCheckpointSaver,
    SerializerProtocol,
)
from stategraph.checkpoint.sqlite import SqliteSaver

__all__ = ["AsyncSqliteSaver"]

T = TypeVar("T")


class AsyncSqliteSaver(BaseCheckpointSaver[str]):
    """Async checkpoint saver backed by SQLite, run on one dedicated worker thread.

    Usage::

        async with AsyncSqliteSaver.from_conn_string("checkpoints.sqlite") as saver:
            graph = builder.compile(checkpointer=saver)
            await graph.ainvoke(inputs, {"configurable": {"thread_id": "1"}})

    ``AsyncSqliteSaver(conn)`` takes a :class:`sqlite3.Connection` opened with
    ``check_same_thread=False``.
    """

    def __init__(
        self,
        conn: sqlite3.Connection,
        *,
        serde: SerializerProtocol | None = None,
        delta_storage: bool = True,
        ttl: TTLConfig | None = None,
        intern_items: bool = True,
    ) -> None:
        """Wrap ``conn``; ``serde`` defaults to ``JsonPlusSerializer()``;
        ``delta_storage``, ``ttl`` and ``intern_items`` as for ``SqliteSaver``."""
        self.core = SqliteSaver(
            conn, serde=serde, delta_storage=delta_storage, ttl=ttl, intern_items=intern_items
        )
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="stategraph-sqlite")

    @property
    def serde(self) -> SerializerProtocol:
        """The serializer (shared with the wrapped ``SqliteSaver``)."""
        return self.core.serde

    @serde.setter
    def serde(self, value: SerializerProtocol) -> None:
        self.core.serde = value

    @property
    def conn(self) -> sqlite3.Connection:
        """The SQLite connection."""
        return self.core.conn

    @classmethod
    @asynccontextmanager
    async def from_conn_string(cls, conn_string: str) -> AsyncIterator[AsyncSqliteSaver]:
        """Open ``conn_string`` (a path or ``":memory:"``), yield a saver, then close
        the worker thread and the connection."""
        conn = sqlite3.connect(conn_string, check_same_thread=False, isolation_level=None)
        saver = cls(conn)
        try:
            yield saver
        finally:
            await asyncio.get_running_loop().run_in_executor(None, saver._close)

    def _close(self) -> None:
        self._executor.shutdown(wait=True)
        self.core.conn.close()

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, functools.partial(fn, *args))

    def _sync(self, name: str) -> SqliteSaver:
        """Return the core for a sync call, refusing inside a running event loop."""
        refuse_in_event_loop("AsyncSqliteSaver", name)
        return self.core

    async def setup(self) -> None:
        """Configure the connection and apply missing migrations (idempotent)."""
        await self._run(self.core.setup)

    # -- the core's methods: async on the worker thread, sync straight ---------------

    aget_tuple = on_worker(SqliteSaver.get_tuple)
    alist = on_worker_iter(SqliteSaver.list)
    aput = on_worker(SqliteSaver.put)
    aput_writes = on_worker(SqliteSaver.put_writes)
    adelete_thread = on_worker(SqliteSaver.delete_thread)
    aget_delta_channel_history = on_worker(SqliteSaver.get_delta_channel_history)

    get_tuple = off_loop(SqliteSaver.get_tuple)
    list = off_loop(SqliteSaver.list)
    put = off_loop(SqliteSaver.put)
    put_writes = off_loop(SqliteSaver.put_writes)
    delete_thread = off_loop(SqliteSaver.delete_thread)
    get_delta_channel_history = off_loop(SqliteSaver.get_delta_channel_history)

    async def _aperform_batched(self, calls: Sequence[SaverCall]) -> Any:
        """Make ``calls`` (the core's ``put``/``put_writes``) in one transaction of the
        core, on the worker thread (see :func:`~stategraph.checkpoint._batched.abatches`)."""
        return await self._run(perform_batched, self.core, calls)

    # -- retention (see SqliteSaver) ---------------------------------------------

    aprune = on_worker(SqliteSaver.prune)
    adelete_for_runs = on_worker(SqliteSaver.delete_for_runs)
    acopy_thread = on_worker(SqliteSaver.copy_thread)
    asweep = on_worker(SqliteSaver.sweep)
    avacuum = on_worker(SqliteSaver.vacuum)

    prune = off_loop(SqliteSaver.prune)
    delete_for_runs = off_loop(SqliteSaver.delete_for_runs)
    copy_thread = off_loop(SqliteSaver.copy_thread)
    sweep = off_loop(SqliteSaver.sweep)
    vacuum = off_loop(SqliteSaver.vacuum)

    def start_ttl_sweeper(self) -> None:
        """Run ``sweep()`` in a background thread (see ``SqliteSaver.start_ttl_sweeper``)."""
        self.core.start_ttl_sweeper()

    def stop_ttl_sweeper(self) -> None:
        """Stop the background sweeper (if running)."""
        self.core.stop_ttl_sweeper()

    # -- leases (the core's, in its database) --------------------------------------

    lease_fencing = True
    lease_rollback_supported = True

    alease_acquire = on_worker(SqliteSaver.lease_acquire)
    alease_enqueue = on_worker(SqliteSaver.lease_enqueue)
    alease_dequeue = on_worker(SqliteSaver.lease_dequeue)
    alease_renew = on_worker(SqliteSaver.lease_renew)
    alease_release = on_worker(SqliteSaver.lease_release)
    alease_rollback = on_worker(SqliteSaver.lease_rollback)

    lease_acquire = off_loop(SqliteSaver.lease_acquire)
    lease_enqueue = off_loop(SqliteSaver.lease_enqueue)
    lease_dequeue = off_loop(SqliteSaver.lease_dequeue)
    lease_renew = off_loop(SqliteSaver.lease_renew)
    lease_release = off_loop(SqliteSaver.lease_release)
    lease_rollback = off_loop(SqliteSaver.lease_rollback)

    def get_next_version(self, current: str | int | float | None, channel: None) -> str:
        """Same string scheme as ``SqliteSaver`` and ``InMemorySaver``."""
        return next_string_version(current)
