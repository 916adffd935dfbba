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
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Sequence
from contextlib import asynccontextmanager, nullcontext
from typing import TYPE_CHECKING, Any, TypeVar, Union

import psycopg
from psycopg.rows import tuple_row

from stategraph.checkpoint._list_delta import Pending
from stategraph.checkpoint._retention import (
    PruneStrategy,
    TTLConfig,
    check_prune_args,
    check_ttl,
    ttl_needed,
)
from stategraph.checkpoint._twins import on_loop
from stategraph.checkpoint._util import check_ids, refuse_in_event_loop
from stategraph.checkpoint.base import (
    CheckpointTuple,
    Config,
    Filter,
    SerializerProtocol,
)
from stategraph.checkpoint.lease_savers import AsyncSqlLeases
from stategraph.checkpoint.lease_sql import (
    POSTGRES,
    Op,
    Statement,
    arun_psycopg,
)
from stategraph.checkpoint.postgres import _sql
from stategraph.checkpoint.postgres._base import (
    ListQuery,
    Plan,
    accept_conn,
    advance,
    autocommit_error,
)
from stategraph.checkpoint.postgres._calls import (
    Calls,
    PostgresCalls,
    aperformed,
    format_plan,
    lease_lost,
    lease_tables_plan,
    migrate_plan,
    setup_needed_plan,
)
from stategraph.checkpoint.postgres._drivers import adrive_on, adrive_retained

if TYPE_CHECKING:
    from psycopg_pool import AsyncConnectionPool

__all__ = ["AsyncPostgresSaver"]

T = TypeVar("T")


AsyncConn = Union["psycopg.AsyncConnection[Any]", "AsyncConnectionPool[Any]"]
"""A psycopg async connection (autocommit) or a ``psycopg_pool.AsyncConnectionPool``."""


class AsyncPostgresSaver(AsyncSqlLeases, PostgresCalls):
    """Async checkpoint saver backed by PostgreSQL through psycopg 3.

    ``AsyncPostgresSaver(conn)`` takes a :class:`psycopg.AsyncConnection` opened with
    ``autocommit=True`` or a ``psycopg_pool.AsyncConnectionPool``. Concurrent tasks
    may share one connection: each saver call is a single statement, or one short
    transaction for a leased run's fenced writes (calls on one shared connection take
    turns; a pool runs them in parallel).
    """

    _lease_dialect = POSTGRES

    def __init__(
        self,
        conn: AsyncConn,
        *,
        serde: SerializerProtocol | None = None,
        delta_storage: bool = True,
        ttl: TTLConfig | None = None,
        intern_items: bool = True,
    ) -> None:
        """Wrap ``conn`` (connection or pool); ``serde`` defaults to ``JsonPlusSerializer()``;
        ``delta_storage`` and ``ttl`` as for ``PostgresSaver``."""
        super().__init__(serde=serde)
        self._init_values(delta_storage, intern_items)
        self.ttl = check_ttl(ttl, type(self).__name__)
        self.conn: psycopg.AsyncConnection[Any] | None
        self.pool: AsyncConnectionPool[Any] | None
        self.conn, self.pool = accept_conn(
            type(self).__name__,
            conn,
            psycopg.AsyncConnection,
            "; for a sync connection use stategraph.checkpoint.postgres.PostgresSaver",
        )
        self.lock = asyncio.Lock()
        self.is_setup = False
        self._conn_lock = asyncio.Lock()
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
        async with self._conn_lock:  # a transaction of one call must not take in another's
            yield conn

    async def _execute_fenced(self, check: list[Statement], sql: str, params: Any) -> None:
        """Run the fence ``check`` and ``sql`` in one transaction, pipelined (one round
        trip): a failed fence aborts the transaction before ``sql`` can commit (an
        implicit transaction on an autocommit connection, as in ``PostgresSaver``)."""
        if not self.is_setup:
            await self.setup()
        try:
            async with self._connection() as conn, conn.pipeline():
                async with (
                    nullcontext() if conn.autocommit else conn.transaction(),
                    conn.cursor(row_factory=tuple_row) as cur,
                ):
                    for statement, args in check:
                        await cur.execute(statement, args)
                    await cur.execute(sql, params)
        except psycopg.errors.DivisionByZero:
            raise lease_lost(check) from None

    async def _put_on_bases(
        self, params: dict[str, Any], check: dict[str, Any] | None, fenced: list[Statement]
    ) -> list[Pending]:
        """Save a checkpoint holding deltas or interned items in one transaction: lock
        the thread's delta bases and items against retention (shared), check the bases
        are stored (a delta whose base is gone is stored whole), fence, save. Two round
        trips (one without deltas)."""
        if not self.is_setup:
            await self.setup()
        try:
            async with self._connection() as conn, conn.transaction():
                async with conn.cursor(row_factory=tuple_row) as cur:
                    existing = None
                    async with conn.pipeline():
                        await cur.execute(
                            _sql.LOCK_BASES_SHARED, {"thread_id": params["thread_id"]}
                        )
                        if check is not None:
                            await cur.execute(_sql.EXISTING_BLOBS, check)
                            existing = await cur.fetchall()
                    params, done = self.finish_put_params(params, existing)
                    async with conn.pipeline():
                        for statement, args in fenced:
                            await cur.execute(statement, args)
                        await cur.execute(_sql.PUT, params)
        except psycopg.errors.DivisionByZero:
            raise lease_lost(fenced) from None
        return done

    async def _alease_run(self, op: Op, single: bool = False) -> Any:
        """Run a lease operation in one transaction (tables made on first use); a
        ``single``-statement one runs on its own (atomic, one round trip)."""
        if not getattr(self, "_lease_tables", False):
            async with self._connection() as conn:
                await adrive_on(conn, lease_tables_plan(), transaction=True)
            self._lease_tables = True
        async with self._connection() as conn:
            async with (
                nullcontext() if single else conn.transaction(),
                conn.cursor(row_factory=tuple_row) as cur,
            ):
                return await arun_psycopg(cur, op)

    async def setup(self) -> None:
        """Create the tables and apply missing migrations (idempotent; runs on first
        use too). Safe when several processes call it at once."""
        async with self.lock:
            if self.is_setup:
                return
            async with self._connection() as conn:
                if await adrive_on(conn, setup_needed_plan("AsyncPostgresSaver")):
                    await adrive_on(conn, migrate_plan(), transaction=True)
                await adrive_on(conn, format_plan())
            self.is_setup = True

    async def _perform(self, calls: Calls[T]) -> T:
        """Carry out a saver call of the core (see :data:`~._calls.Calls`)."""
        more, step = advance(calls, None)
        while more:
            more, step = advance(calls, await getattr(self, step[0])(*step[1]))
        done: T = step
        return done

    async def _fetch(self, sql: str, params: Any) -> list[tuple[Any, ...]]:
        """Run one statement on its own; its rows (``[]`` when it has none)."""
        if not self.is_setup:
            await self.setup()
        async with self._connection() as conn, conn.cursor(row_factory=tuple_row) as cur:
            await cur.execute(sql, params)
            return await cur.fetchall() if cur.description is not None else []

    async def _run_plan(
        self, plan: Plan[T], *, transaction: bool = False, snapshot: bool = False
    ) -> T:
        """Run a plan of the core (see :data:`~._base.Plan`) on one connection; with
        ``transaction``, in one transaction; with ``snapshot``, in one REPEATABLE READ
        transaction."""
        if not self.is_setup:
            await self.setup()
        async with self._connection() as conn:
            return await adrive_on(conn, plan, transaction=transaction, snapshot=snapshot)

    async def _read(self, plan_of: Callable[[bool], Plan[T]]) -> T:
        """Run the read ``plan_of(True)``; again as ``plan_of(False)`` in one snapshot
        when values it needs were deleted between its statements (:data:`~._base.Plan`)."""
        try:
            return await self._run_plan(plan_of(True))
        except ValueError:
            return await self._run_plan(plan_of(False), snapshot=True)

    # -- async API -------------------------------------------------------------

    async def aget_tuple(self, config: dict[str, Any]) -> CheckpointTuple | None:
        """Return the checkpoint named by ``config`` or the latest of its
        ``(thread_id, checkpoint_ns)``, with its pending writes; ``None`` if absent."""
        statement = self.get_tuple_statement(config)
        return await self._read(lambda first: self._get_tuple_plan(statement, first))

    async def _alist(
        self, config: Config | None, filter: Filter, before: Config | None, limit: int | None
    ) -> AsyncIterator[CheckpointTuple]:
        """``alist``: matching checkpoints newest first, read in pages of 100."""
        query = ListQuery(config, filter, before, limit)
        while not query.done:
            for item in await self._read(lambda _: self.list_page_plan(query)):
                yield item

    _aput = aperformed(PostgresCalls.put_calls)
    _aput_writes = aperformed(PostgresCalls.put_writes_calls)

    async def adelete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint, write and value of ``thread_id`` atomically."""
        await self._perform(self.delete_thread_calls(thread_id, "adelete_thread"))

    # -- sync API (from threads other than the event loop's) ---------------------

    def _sync(self, name: str, make: Callable[[], Coroutine[Any, Any, T]]) -> T:
        """Run the coroutine ``make()`` on the saver's event loop and wait for it."""
        refuse_in_event_loop("AsyncPostgresSaver", name)
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

    def _list(
        self, config: Config | None, filter: Filter, before: Config | None, limit: int | None
    ) -> Iterator[CheckpointTuple]:
        """``list``: :meth:`alist`'s pages, each read on the saver's event loop (raises
        inside a running event loop)."""
        query = ListQuery(config, filter, before, limit)
        while not query.done:
            yield from self._sync("list", lambda: self._read(lambda _: self.list_page_plan(query)))

    _put = on_loop(_aput, "put")
    _put_writes = on_loop(_aput_writes, "put_writes")

    def delete_thread(self, thread_id: str) -> None:
        """Sync :meth:`adelete_thread`; raises inside a running event loop."""
        check_ids("delete_thread", thread_id=thread_id)
        self._sync("delete_thread", lambda: self.adelete_thread(thread_id))

    # -- retention ---------------------------------------------------------------

    async def aprune(
        self,
        thread_ids: Sequence[str],
        *,
        strategy: PruneStrategy = "keep_latest",
        keep_last: int | None = None,
    ) -> None:
        """Shrink the history of ``thread_ids``, each thread in one REPEATABLE
        READ transaction on the saver's connection (see ``PostgresSaver.prune``)."""
        await self._perform(self.prune_calls(thread_ids, strategy, keep_last, "aprune"))

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints (and their writes) whose metadata ``run_id`` is in
        ``run_ids``, in every thread (one transaction per thread); one a remaining
        checkpoint needs to rebuild its ``DeltaChannel`` values stays."""
        await self._perform(self.delete_for_runs_calls(run_ids, "adelete_for_runs"))

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint, write and value of one thread to a new thread id
        (checkpoint ids, parents and metadata unchanged), in one transaction. The target
        must be empty."""
        await self._run_plan(self.copy_plan(source_thread_id, target_thread_id), transaction=True)

    async def asweep(self) -> int:
        """Delete the threads whose time to live ran out; return how many.

        A thread lives ``ttl["default_ttl"]`` minutes after its last write (or read,
        with ``refresh_on_read``), recorded in the database, so any process sweeping
        sees every process's activity. Without ``ttl`` nothing expires.
        """
        return await self._perform(self.sweep_calls())

    async def _retain(
        self, tid: str, choose: Callable[[Sequence[CheckpointTuple]], set[tuple[str, str]] | None]
    ) -> None:
        if not self.is_setup:
            await self.setup()
        async with self._connection() as conn:
            await adrive_retained(conn, tid, self.retain_gen(tid, choose))
        if self.delta is not None:
            self.delta.forget(tid)

    def prune(
        self,
        thread_ids: Sequence[str],
        *,
        strategy: PruneStrategy = "keep_latest",
        keep_last: int | None = None,
    ) -> None:
        """Sync :meth:`aprune` (from a thread other than the event loop's)."""
        check_ids("prune", thread_ids=thread_ids)
        check_prune_args(thread_ids, strategy, keep_last, type(self).__name__)
        self._sync("prune", lambda: self.aprune(thread_ids, strategy=strategy, keep_last=keep_last))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Sync :meth:`adelete_for_runs`."""
        check_ids("delete_for_runs", run_ids=run_ids)
        self._sync("delete_for_runs", lambda: self.adelete_for_runs(run_ids))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Sync :meth:`acopy_thread`."""
        check_ids(
            "copy_thread", source_thread_id=source_thread_id, target_thread_id=target_thread_id
        )
        self._sync("copy_thread", lambda: self.acopy_thread(source_thread_id, target_thread_id))

    def sweep(self) -> int:
        """Sync :meth:`asweep`."""
        return self._sync("sweep", self.asweep)

    def start_ttl_sweeper(self) -> None:
        """Run :meth:`asweep` every ``ttl["sweep_interval_minutes"]`` (default: every
        ``default_ttl`` / 4) as a task of the running event loop."""
        if self.ttl is None:
            raise ttl_needed(type(self).__name__, "conn, ")
        if getattr(self, "_sweep_task", None) is None:
            interval = 60.0 * (
                self.ttl.get("sweep_interval_minutes") or self.ttl["default_ttl"] / 4
            )

            async def loop() -> None:
                while True:
                    await asyncio.sleep(interval)
                    try:
                        await self.asweep()
                    except Exception:  # keep sweeping; the next round retries
                        continue

            self._sweep_task: asyncio.Task[None] | None = asyncio.get_running_loop().create_task(
                loop()
            )

    def stop_ttl_sweeper(self) -> None:
        """Stop the background sweep task (if running)."""
        task = getattr(self, "_sweep_task", None)
        if task is not None:
            task.cancel()
            self._sweep_task = None

    async def _atask_paths(self, saved: CheckpointTuple) -> dict[str, str]:
        """Task id -> saved task path of the pending writes of ``saved``."""
        return await self._perform(self.task_paths_calls(saved))


def __getattr__(name: str) -> Any:
    """``AsyncShallowPostgresSaver`` lives in :mod:`.shallow` (imported on first use)."""
    if name == "AsyncShallowPostgresSaver":
        from stategraph.checkpoint.postgres.shallow import AsyncShallowPostgresSaver

        return AsyncShallowPostgresSaver
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
