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
import itertools
import sqlite3
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from stategraph.checkpoint._ids import next_string_version
from stategraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    SerializerProtocol,
)
from stategraph.checkpoint.sqlite import SqliteSaver

__all__ = ["AsyncSqliteSaver"]

T = TypeVar("T")
_CHUNK = 64


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
        self, conn: sqlite3.Connection, *, serde: SerializerProtocol | None = None
    ) -> None:
        """Wrap ``conn``; ``serde`` defaults to ``JsonPlusSerializer()``."""
        self.core = SqliteSaver(conn, serde=serde)
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
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return self.core
        raise RuntimeError(
            f"AsyncSqliteSaver.{name}() was called from inside a running event loop, "
            f"where it would block the loop: use `await saver.a{name}(...)` instead "
            "(for a graph: ainvoke/astream instead of invoke/stream)."
        )

    async def setup(self) -> None:
        """Configure the connection and apply missing migrations (idempotent)."""
        await self._run(self.core.setup)

    # -- async API -------------------------------------------------------------

    async def aget_tuple(self, config: dict[str, Any]) -> CheckpointTuple | None:
        """Return the checkpoint named by ``config`` or the latest, or ``None``."""
        return await self._run(self.core.get_tuple, config)

    async def alist(
        self,
        config: dict[str, Any] | None,
        *,
        filter: dict[str, Any] | None = None,
        before: dict[str, Any] | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """Yield matching checkpoints newest first, read on the worker thread."""
        it = self.core.list(config, filter=filter, before=before, limit=limit)

        def take(source: Iterator[CheckpointTuple]) -> list[CheckpointTuple]:
            return list(itertools.islice(source, _CHUNK))

        while True:
            chunk = await self._run(take, it)
            for item in chunk:
                yield item
            if len(chunk) < _CHUNK:
                return

    async def aput(
        self,
        config: dict[str, Any],
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> dict[str, Any]:
        """Save ``checkpoint`` atomically and return the config naming it."""
        return await self._run(self.core.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: dict[str, Any],
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Save a task's pending writes atomically (special channels replace)."""
        await self._run(self.core.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        """Delete everything saved for ``thread_id``."""
        await self._run(self.core.delete_thread, thread_id)

    # -- sync API (only outside a running event loop) ----------------------------

    def get_tuple(self, config: dict[str, Any]) -> CheckpointTuple | None:
        """Sync :meth:`aget_tuple`; raises inside a running event loop."""
        return self._sync("get_tuple").get_tuple(config)

    def list(
        self,
        config: dict[str, Any] | None,
        *,
        filter: dict[str, Any] | None = None,
        before: dict[str, Any] | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Sync :meth:`alist`; raises inside a running event loop."""
        return self._sync("list").list(config, filter=filter, before=before, limit=limit)

    def put(
        self,
        config: dict[str, Any],
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> dict[str, Any]:
        """Sync :meth:`aput`; raises inside a running event loop."""
        return self._sync("put").put(config, checkpoint, metadata, new_versions)

    def put_writes(
        self,
        config: dict[str, Any],
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Sync :meth:`aput_writes`; raises inside a running event loop."""
        self._sync("put_writes").put_writes(config, writes, task_id, task_path)

    def delete_thread(self, thread_id: str) -> None:
        """Sync :meth:`adelete_thread`; raises inside a running event loop."""
        self._sync("delete_thread").delete_thread(thread_id)

    def get_next_version(self, current: str | int | float | None, channel: None) -> str:
        """Same string scheme as ``SqliteSaver`` and ``InMemorySaver``."""
        return next_string_version(current)
