"""``AsyncPostgresSaver``: the PostgreSQL saver for asyncio programs (psycopg 3 async).

Usage::

    from stategraph.checkpoint.postgres.aio import AsyncPostgresSaver

    async with AsyncPostgresSaver.from_conn_string("postgresql://user@host/db") as saver:
        await saver.setup()  # optional: also runs on first use
        graph = builder.compile(checkpointer=saver)
        await graph.ainvoke(inputs, {"configurable": {"thread_id": "1"}})

Same tables and statements as :class:`~stategraph.checkpoint.postgres.PostgresSaver`
(the two can share a database). Sync methods: called from a thread with no running
event loop (for example a worker thread of a sync graph run) they run the async ones
on the event loop the saver is used from and wait; called from inside a running event
loop they raise, because they would block it.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeVar, Union

import psycopg
from psycopg.rows import tuple_row

from stategraph.checkpoint._util import checkpoint_config
from stategraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    SerializerProtocol,
)
from stategraph.checkpoint.postgres import _sql
from stategraph.checkpoint.postgres._base import ListQuery, PostgresCore, autocommit_error

if TYPE_CHECKING:
    from psycopg_pool import AsyncConnectionPool

__all__ = ["AsyncPostgresSaver"]

T = TypeVar("T")
AsyncConn = Union["psycopg.AsyncConnection[Any]", "AsyncConnectionPool[Any]"]
"""A psycopg async connection (autocommit) or a ``psycopg_pool.AsyncConnectionPool``."""


async def _amigrate(conn: psycopg.AsyncConnection[Any]) -> None:
    """Async twin of ``postgres._migrate``: missing migrations, in order, in one
    transaction holding the setup advisory lock."""

    async def current(cur: psycopg.AsyncCursor[Any]) -> int:
        await cur.execute(_sql.MIGRATIONS_TABLE_EXISTS)
        row = await cur.fetchone()
        if not row or not row[0]:
            return -1
        await cur.execute(_sql.MAX_VERSION)
        row = await cur.fetchone()
        return -1 if row is None else int(row[0])

    last = len(_sql.MIGRATIONS) - 1
    async with conn.cursor(row_factory=tuple_row) as cur:
        if await current(cur) >= last:
            return
    async with conn.transaction(), conn.cursor(row_factory=tuple_row) as cur:
        await cur.execute(_sql.LOCK_SETUP, (_sql.SETUP_LOCK_KEY,))
        await cur.execute(_sql.CREATE_MIGRATIONS_TABLE)
        for v in range(await current(cur) + 1, last + 1):
            for statement in _sql.MIGRATIONS[v]:
                await cur.execute(statement)
            await cur.execute(_sql.INSERT_VERSION, (v,))


class AsyncPostgresSaver(PostgresCore):
    """Async checkpoint saver backed by PostgreSQL through psycopg 3.

    ``AsyncPostgresSaver(conn)`` takes a :class:`psycopg.AsyncConnection` opened with
    ``autocommit=True`` or a ``psycopg_pool.AsyncConnectionPool``. Concurrent tasks
    may share one connection: each saver call is a single statement.
    """

    def __init__(self, conn: AsyncConn, *, serde: SerializerProtocol | None = None) -> None:
        """Wrap ``conn`` (connection or pool); ``serde`` defaults to ``JsonPlusSerializer()``."""
        super().__init__(serde=serde)
        if isinstance(conn, psycopg.AsyncConnection):
            if not conn.autocommit:
                raise autocommit_error(type(self).__name__)
            self.conn: psycopg.AsyncConnection[Any] | None = conn
            self.pool: AsyncConnectionPool[Any] | None = None
        elif callable(getattr(conn, "connection", None)):
            self.conn = None
            self.pool = conn
        else:
            raise TypeError(
                f"{type(self).__name__} needs a psycopg.AsyncConnection or a "
                f"psycopg_pool.AsyncConnectionPool, got {type(conn).__name__}; for a "
                "sync connection use stategraph.checkpoint.postgres.PostgresSaver."
            )
        self.lock = asyncio.Lock()
        self.is_setup = False
        self.loop: asyncio.AbstractEventLoop | None
        try:
            self.loop = asyncio.get_running_loop()
        except RuntimeError:
            self.loop = None

    @classmethod
    @asynccontextmanager
    async def from_conn_string(cls, conn_string: str) -> AsyncIterator[AsyncPostgresSaver]:
        """Connect to ``conn_string`` (autocommit), yield a saver, then close.

        Usage: ``async with AsyncPostgresSaver.from_conn_string("postgresql://...") as s:``
        """
        async with await psycopg.AsyncConnection.connect(conn_string, autocommit=True) as conn:
            yield cls(conn)

    # -- plumbing --------------------------------------------------------------

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        if self.loop is None:
            self.loop = asyncio.get_running_loop()
        if self.pool is not None:
            async with self.pool.connection() as conn:
                yield conn
            return
        conn = self.conn
        assert conn is not None
        if not conn.autocommit:
            raise autocommit_error(type(self).__name__)
        yield conn

    async def setup(self) -> None:
        """Create the tables and apply missing migrations (idempotent; runs on first
        use too). Safe when several processes call it at once."""
        async with self.lock:
            if self.is_setup:
                return
            async with self._connection() as conn:
                await _amigrate(conn)
            self.is_setup = True

    async def _fetch(self, sql: str, params: Any) -> list[tuple[Any, ...]]:
        if not self.is_setup:
            await self.setup()
        async with self._connection() as conn, conn.cursor(row_factory=tuple_row) as cur:
            await cur.execute(sql, params)
            return await cur.fetchall()

    async def _execute(self, sql: str, params: Any) -> None:
        if not self.is_setup:
            await self.setup()
        async with self._connection() as conn, conn.cursor(row_factory=tuple_row) as cur:
            await cur.execute(sql, params)

    # -- async API -------------------------------------------------------------

    async def aget_tuple(self, config: dict[str, Any]) -> CheckpointTuple | None:
        """Return the checkpoint named by ``config`` or the latest of its
        ``(thread_id, checkpoint_ns)``, with its pending writes; ``None`` if absent."""
        sql, params = self.get_tuple_statement(config)
        rows = await self._fetch(sql, params)
        return self.row_to_tuple(rows[0]) if rows else None

    async def alist(
        self,
        config: dict[str, Any] | None,
        *,
        filter: dict[str, Any] | None = None,
        before: dict[str, Any] | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """Yield matching checkpoints newest first, read in pages of 100."""
        query = ListQuery(config, filter, before, limit)
        while not query.done:
            sql, params, page = query.next_statement()
            for item in query.take(self, await self._fetch(sql, params), page):
                yield item

    async def aput(
        self,
        config: dict[str, Any],
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> dict[str, Any]:
        """Save ``checkpoint`` atomically and return the config naming it."""
        params = self.put_params(config, checkpoint, metadata, new_versions)
        await self._execute(_sql.PUT, params)
        return checkpoint_config(params["thread_id"], params["ns"], checkpoint["id"])

    async def aput_writes(
        self,
        config: dict[str, Any],
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Save a task's pending writes atomically (special channels replace)."""
        params = self.put_writes_params(config, writes, task_id, task_path)
        if params is not None:
            await self._execute(_sql.PUT_WRITES, params)

    async def adelete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint, write and value of ``thread_id`` atomically."""
        await self._execute(_sql.DELETE_THREAD, {"thread_id": str(thread_id)})

    # -- sync API (from threads other than the event loop's) ---------------------

    def _sync(self, name: str, make: Callable[[], Coroutine[Any, Any, T]]) -> T:
        """Run the coroutine ``make()`` on the saver's event loop and wait for it."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            raise RuntimeError(
                f"AsyncPostgresSaver.{name}() was called from inside a running event loop, "
                f"where it would block the loop: use `await saver.a{name}(...)` instead "
                "(for a graph: ainvoke/astream instead of invoke/stream)."
            )
        loop = self.loop
        if loop is None or not loop.is_running():
            raise RuntimeError(
                f"AsyncPostgresSaver.{name}() needs the event loop the saver's connection "
                "belongs to to be running (in another thread); use PostgresSaver for "
                "sync programs."
            )
        return asyncio.run_coroutine_threadsafe(make(), loop).result()

    def get_tuple(self, config: dict[str, Any]) -> CheckpointTuple | None:
        """Sync :meth:`aget_tuple`; raises inside a running event loop."""
        return self._sync("get_tuple", lambda: self.aget_tuple(config))

    def list(
        self,
        config: dict[str, Any] | None,
        *,
        filter: dict[str, Any] | None = None,
        before: dict[str, Any] | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Sync :meth:`alist`; raises inside a running event loop."""
        query = ListQuery(config, filter, before, limit)
        while not query.done:
            sql, params, page = query.next_statement()
            rows = self._sync("list", functools.partial(self._fetch, sql, params))
            yield from query.take(self, rows, page)

    def put(
        self,
        config: dict[str, Any],
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> dict[str, Any]:
        """Sync :meth:`aput`; raises inside a running event loop."""
        return self._sync("put", lambda: self.aput(config, checkpoint, metadata, new_versions))

    def put_writes(
        self,
        config: dict[str, Any],
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Sync :meth:`aput_writes`; raises inside a running event loop."""
        self._sync("put_writes", lambda: self.aput_writes(config, writes, task_id, task_path))

    def delete_thread(self, thread_id: str) -> None:
        """Sync :meth:`adelete_thread`; raises inside a running event loop."""
        self._sync("delete_thread", lambda: self.adelete_thread(thread_id))
