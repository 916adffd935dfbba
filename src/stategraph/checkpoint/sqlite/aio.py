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
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from stategraph.checkpoint._ids import next_string_version
from stategraph.checkpoint._retention import PruneStrategy, TTLConfig
from stategraph.checkpoint._util import refuse_in_event_loop
from stategraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
    SerializerProtocol,
)
from stategraph.checkpoint.lease import PRIORITY_ENQUEUE, Lease, LeaseAttempt
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

    async def aget_delta_channel_history(
        self, *, config: dict[str, Any], channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """What rebuilds the delta-stored channels of a checkpoint (see
        ``BaseCheckpointSaver.get_delta_channel_history``), read on the worker thread."""
        return await self._run(
            functools.partial(self.core.get_delta_channel_history, config=config, channels=channels)
        )

    def get_delta_channel_history(
        self, *, config: dict[str, Any], channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """Sync :meth:`aget_delta_channel_history`; raises inside a running event loop."""
        return self._sync("get_delta_channel_history").get_delta_channel_history(
            config=config, channels=channels
        )

    async def adelete_thread(self, thread_id: str) -> None:
        """Delete everything saved for ``thread_id``."""
        await self._run(self.core.delete_thread, thread_id)

    # -- retention (see SqliteSaver) ---------------------------------------------

    async def aprune(
        self,
        thread_ids: Sequence[str],
        *,
        strategy: PruneStrategy = "keep_latest",
        keep_last: int | None = None,
    ) -> None:
        """Shrink the history of ``thread_ids`` (see ``SqliteSaver.prune``)."""
        await self._run(
            functools.partial(self.core.prune, thread_ids, strategy=strategy, keep_last=keep_last)
        )

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints of runs ``run_ids`` (see ``SqliteSaver.delete_for_runs``)."""
        await self._run(self.core.delete_for_runs, run_ids)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy a thread to a new id (see ``SqliteSaver.copy_thread``)."""
        await self._run(self.core.copy_thread, source_thread_id, target_thread_id)

    async def asweep(self) -> int:
        """Delete expired threads; return how many (see ``SqliteSaver.sweep``)."""
        return await self._run(self.core.sweep)

    async def avacuum(self) -> None:
        """Rebuild the file to its smallest size (see ``SqliteSaver.vacuum``)."""
        await self._run(self.core.vacuum)

    def prune(
        self,
        thread_ids: Sequence[str],
        *,
        strategy: PruneStrategy = "keep_latest",
        keep_last: int | None = None,
    ) -> None:
        """Sync :meth:`aprune`; raises inside a running event loop."""
        self._sync("prune").prune(thread_ids, strategy=strategy, keep_last=keep_last)

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Sync :meth:`adelete_for_runs`; raises inside a running event loop."""
        self._sync("delete_for_runs").delete_for_runs(run_ids)

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Sync :meth:`acopy_thread`; raises inside a running event loop."""
        self._sync("copy_thread").copy_thread(source_thread_id, target_thread_id)

    def sweep(self) -> int:
        """Sync :meth:`asweep`; raises inside a running event loop."""
        return self._sync("sweep").sweep()

    def vacuum(self) -> None:
        """Sync :meth:`avacuum`; raises inside a running event loop."""
        self._sync("vacuum").vacuum()

    def start_ttl_sweeper(self) -> None:
        """Run ``sweep()`` in a background thread (see ``SqliteSaver.start_ttl_sweeper``)."""
        self.core.start_ttl_sweeper()

    def stop_ttl_sweeper(self) -> None:
        """Stop the background sweeper (if running)."""
        self.core.stop_ttl_sweeper()

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

    # -- leases (the core's, on the worker thread) --------------------------------

    lease_fencing = True
    lease_rollback_supported = True

    async def alease_acquire(
        self,
        thread_id: str,
        run_id: str,
        ttl: float,
        *,
        ticket: int | None = None,
        priority: int = PRIORITY_ENQUEUE,
        stop: str | None = None,
    ) -> LeaseAttempt:
        """See ``LeaseSupport.lease_acquire``."""
        call = functools.partial(
            self.core.lease_acquire, ticket=ticket, priority=priority, stop=stop
        )
        return await self._run(call, thread_id, run_id, ttl)

    async def alease_enqueue(self, thread_id: str, run_id: str, ttl: float, priority: int) -> int:
        """See ``LeaseSupport.lease_enqueue``."""
        return await self._run(self.core.lease_enqueue, thread_id, run_id, ttl, priority)

    async def alease_dequeue(self, thread_id: str, ticket: int) -> None:
        """See ``LeaseSupport.lease_dequeue``."""
        await self._run(self.core.lease_dequeue, thread_id, ticket)

    async def alease_renew(self, lease: Lease) -> str | None:
        """See ``LeaseSupport.lease_renew``."""
        return await self._run(self.core.lease_renew, lease)

    async def alease_release(self, lease: Lease, *, finished: bool = True) -> None:
        """See ``LeaseSupport.lease_release``."""
        await self._run(functools.partial(self.core.lease_release, finished=finished), lease)

    async def alease_rollback(self, lease: Lease, tokens: Iterable[int]) -> int:
        """See ``LeaseSupport.lease_rollback``."""
        return await self._run(self.core.lease_rollback, lease, list(tokens))

    def lease_acquire(
        self,
        thread_id: str,
        run_id: str,
        ttl: float,
        *,
        ticket: int | None = None,
        priority: int = PRIORITY_ENQUEUE,
        stop: str | None = None,
    ) -> LeaseAttempt:
        """Sync :meth:`alease_acquire`; raises inside a running event loop."""
        return self._sync("lease_acquire").lease_acquire(
            thread_id, run_id, ttl, ticket=ticket, priority=priority, stop=stop
        )

    def lease_enqueue(self, thread_id: str, run_id: str, ttl: float, priority: int) -> int:
        """Sync :meth:`alease_enqueue`."""
        return self._sync("lease_enqueue").lease_enqueue(thread_id, run_id, ttl, priority)

    def lease_dequeue(self, thread_id: str, ticket: int) -> None:
        """Sync :meth:`alease_dequeue`."""
        self._sync("lease_dequeue").lease_dequeue(thread_id, ticket)

    def lease_renew(self, lease: Lease) -> str | None:
        """Sync :meth:`alease_renew`."""
        return self._sync("lease_renew").lease_renew(lease)

    def lease_release(self, lease: Lease, *, finished: bool = True) -> None:
        """Sync :meth:`alease_release`."""
        self._sync("lease_release").lease_release(lease, finished=finished)

    def lease_rollback(self, lease: Lease, tokens: Iterable[int]) -> int:
        """Sync :meth:`alease_rollback`."""
        return self._sync("lease_rollback").lease_rollback(lease, tokens)

    def get_next_version(self, current: str | int | float | None, channel: None) -> str:
        """Same string scheme as ``SqliteSaver`` and ``InMemorySaver``."""
        return next_string_version(current)
