"""The asyncio PostgreSQL store: :class:`AsyncPostgresStore` (LangGraph's API).

It takes a ``psycopg.AsyncConnection`` or a ``psycopg_pool.AsyncConnectionPool``. A
batch runs in one transaction on the event loop's connection; the batch engine (shared
with every local store, so sync and async behave the same) runs on a worker thread and
sends each statement back to the event loop, so the loop never blocks.

As in LangGraph, :meth:`setup`, :meth:`sweep_ttl`, :meth:`start_ttl_sweeper` and
:meth:`stop_ttl_sweeper` are coroutines; the synchronous ``get``/``put``/``search``...
work from other threads (not from the event loop's own thread).

Example::

    async with AsyncPostgresStore.from_conn_string("postgresql://localhost/app") as store:
        await store.aput(("users", "alice"), "prefs", {"theme": "dark"})
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, cast

from stategraph.store._engine import LocalStore, Plan, Vectors
from stategraph.store._ttl import normalize_ttl_config
from stategraph.store.base import IndexConfig, Result, TTLConfig
from stategraph.store.postgres import (
    PoolConfig,
    SetupSteps,
    VectorChoice,
    check_vector_choice,
    pool_kwargs,
)
from stategraph.store.postgres._backend import (
    MIGRATIONS,
    PgBackend,
    VectorMode,
    json_loader,
    split_index_config,
)

if TYPE_CHECKING:
    import psycopg

__all__ = ["AsyncPostgresStore"]

Run = Callable[[str, Sequence[Any], bool], list[tuple[Any, ...]]]


class AsyncPostgresStore(LocalStore):
    """A store in PostgreSQL for asyncio code (same options as ``PostgresStore``)."""

    MIGRATIONS = MIGRATIONS
    supports_ttl = True

    def __init__(
        self,
        conn: psycopg.AsyncConnection[Any] | Any,
        *,
        deserializer: Callable[[bytes], dict[str, Any]] | None = None,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        vector: VectorChoice = "auto",
        pipeline: bool = False,
    ) -> None:
        common, _ = split_index_config(index)
        self.conn: Any = conn
        self._is_pool = hasattr(conn, "getconn")
        self._loads = json_loader(deserializer)
        self._vector_choice = check_vector_choice(vector)
        self.vector_mode: VectorMode = "array"
        self.pipeline = pipeline
        self.is_setup = False
        self._owned: Any = None
        self._locks: dict[int, asyncio.Lock] = {}
        self._stamp_lock = threading.Lock()
        self._task: asyncio.Task[None] | None = None
        try:
            self.loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            self.loop = None
        # the sweeper is an asyncio task here: LocalStore must not start its thread
        no_sweep = None
        if ttl is not None:
            no_sweep = cast(
                TTLConfig, {k: v for k, v in ttl.items() if k != "sweep_interval_minutes"}
            )
        super().__init__(index=common, ttl=no_sweep)
        self.ttl_config = normalize_ttl_config(ttl)
        self.index_config = index

    @classmethod
    @asynccontextmanager
    async def from_conn_string(
        cls,
        conn_string: str,
        *,
        pipeline: bool = False,
        pool_config: PoolConfig | None = None,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        vector: VectorChoice = "auto",
    ) -> AsyncIterator[AsyncPostgresStore]:
        """Open a store on ``conn_string`` (a pool with ``pool_config``); close it on exit."""
        import psycopg

        owned: Any
        if pool_config is not None:
            from psycopg_pool import AsyncConnectionPool

            owned = AsyncConnectionPool(conn_string, **pool_kwargs(pool_config), open=False)
            await owned.open()
        else:
            owned = await psycopg.AsyncConnection.connect(conn_string, autocommit=True)
        store: AsyncPostgresStore | None = None
        try:
            store = cls(owned, index=index, ttl=ttl, vector=vector, pipeline=pipeline)
            store._owned = owned
            interval = (store.ttl_config or {}).get("sweep_interval_minutes")
            if interval:
                await store.start_ttl_sweeper(interval)
            yield store
        finally:
            if store is not None:
                await store.stop_ttl_sweeper()
            await owned.close()

    # -- connections ------------------------------------------------------------

    def _lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        lock = self._locks.get(id(loop))
        if lock is None:
            lock = self._locks[id(loop)] = asyncio.Lock()
        return lock

    async def _in_transaction(self, work: Callable[[Run], Any]) -> Any:
        """Run ``work(run)`` on a worker thread inside one transaction on the loop."""
        loop = asyncio.get_running_loop()
        if self.loop is None:
            self.loop = loop
        if self._is_pool:
            async with self.conn.connection() as conn:
                return await self._on(conn, loop, work)
        async with self._lock():
            return await self._on(self.conn, loop, work)

    async def _on(
        self, conn: Any, loop: asyncio.AbstractEventLoop, work: Callable[[Run], Any]
    ) -> Any:
        from psycopg.rows import tuple_row

        async def statement(sql: str, params: Sequence[Any], fetch: bool) -> list[tuple[Any, ...]]:
            await cur.execute(sql, params)
            return await cur.fetchall() if fetch else []

        def run(sql: str, params: Sequence[Any], fetch: bool) -> list[tuple[Any, ...]]:
            return asyncio.run_coroutine_threadsafe(statement(sql, params, fetch), loop).result()

        if self.pipeline:
            async with conn.pipeline(), conn.transaction():
                async with conn.cursor(row_factory=tuple_row) as cur:
                    return await asyncio.to_thread(work, run)
        async with conn.transaction():
            async with conn.cursor(row_factory=tuple_row) as cur:
                return await asyncio.to_thread(work, run)

    def _stamp(self) -> float:
        with self._stamp_lock:
            return super()._stamp()

    def _bridge(self, name: str, coro: Any) -> Any:
        """Run ``coro`` on the store's event loop from another thread."""
        loop = self.loop
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if loop is None or running is loop:
            coro.close()
            raise asyncio.InvalidStateError(
                f"Synchronous {name}() of AsyncPostgresStore cannot run on the event loop's "
                f"thread (it would block the loop): use 'await store.a{name}(...)'; call "
                f"{name}() only from other threads while the loop runs."
            )
        return asyncio.run_coroutine_threadsafe(coro, loop).result()

    # -- setup and batches ------------------------------------------------------

    async def setup(self) -> None:
        """Create or migrate the tables, and the vector column if pgvector is used."""
        if self.is_setup:
            return
        index, choice, now = self._index, self._vector_choice, self._now()

        def work(run: Run) -> VectorMode:
            return SetupSteps.setup(run, now, index, choice)

        self.vector_mode = await self._in_transaction(work)
        self.is_setup = True

    async def _aexecute(self, plan: Plan, vectors: Vectors) -> list[Result]:
        if not self.is_setup:
            await self.setup()
        now = self._now()

        def work(run: Run) -> list[Result]:
            return SetupSteps.batch(run, self, plan, vectors, now)

        result: list[Result] = await self._in_transaction(work)
        return result

    def _execute(self, plan: Plan, vectors: Vectors) -> list[Result]:
        return self._bridge("batch", self._aexecute(plan, vectors))

    # -- TTL ----------------------------------------------------------------------

    async def sweep_ttl(self) -> int:  # type: ignore[override]
        """Delete expired items now; return how many were deleted."""
        if not self.is_setup:
            await self.setup()
        now = self._now()
        count: int = await self._in_transaction(
            lambda run: PgBackend(run, self.vector_mode, self._loads).sweep(now)
        )
        return count

    async def asweep_ttl(self) -> int:
        """Same as :meth:`sweep_ttl` (the name the other stores use)."""
        return await self.sweep_ttl()

    async def start_ttl_sweeper(  # type: ignore[override]
        self, sweep_interval_minutes: float | None = None
    ) -> asyncio.Task[None]:
        """Start an asyncio task sweeping expired items periodically; return it."""
        if self._task is not None and not self._task.done():
            return self._task
        interval = sweep_interval_minutes or (self.ttl_config or {}).get("sweep_interval_minutes")
        seconds = float(interval or 60) * 60.0

        async def loop() -> None:
            while True:
                await asyncio.sleep(seconds)
                try:
                    await self.sweep_ttl()
                except Exception as exc:  # keep sweeping; report once per failure
                    import warnings

                    warnings.warn(f"AsyncPostgresStore TTL sweep failed: {exc!r}", stacklevel=1)

        self._task = asyncio.get_running_loop().create_task(loop())
        return self._task

    async def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:  # type: ignore[override]
        """Cancel the sweeper task; True once it has ended."""
        task, self._task = self._task, None
        if task is None:
            return True
        task.cancel()
        try:
            await asyncio.wait_for(asyncio.shield(task), timeout)
        except asyncio.CancelledError:
            return True
        except asyncio.TimeoutError:
            return False
        return task.done()
