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
import time
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
)
from stategraph.checkpoint._util import check_ids, checkpoint_config
from stategraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    SerializerProtocol,
)
from stategraph.checkpoint.langgraph_import._guard import (
    langgraph_postgres_statement,
    postgres_error,
)
from stategraph.checkpoint.lease import lease_token
from stategraph.checkpoint.lease_savers import AsyncSqlLeases
from stategraph.checkpoint.lease_sql import (
    POSTGRES,
    Op,
    Statement,
    arun_psycopg,
    pg_fence_statements,
)
from stategraph.checkpoint.postgres import _sql
from stategraph.checkpoint.postgres._base import (
    ListQuery,
    Plan,
    PostgresCore,
    autocommit_error,
    check_format,
    choose_latest,
    choose_without_runs,
)
from stategraph.errors import LeaseLostError

if TYPE_CHECKING:
    from psycopg_pool import AsyncConnectionPool

__all__ = ["AsyncPostgresSaver"]

T = TypeVar("T")


async def _drive(cur: psycopg.AsyncCursor[Any], plan: Plan[T]) -> T:
    """Execute the statements of ``plan`` on ``cur``, feeding it their rows."""
    rows: Any = None
    while True:
        try:
            sql, params = plan.send(rows)
        except StopIteration as stop:
            result: T = stop.value
            return result
        await cur.execute(sql, params)
        rows = await cur.fetchall() if cur.description is not None else None


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
        await cur.execute(langgraph_postgres_statement())
        refused = postgres_error("AsyncPostgresSaver", await cur.fetchone())
        if refused is not None:
            raise refused
        if await current(cur) >= last:
            return
    async with conn.transaction(), conn.cursor(row_factory=tuple_row) as cur:
        await cur.execute(_sql.LOCK_SETUP, (_sql.SETUP_LOCK_KEY,))
        await cur.execute(_sql.CREATE_MIGRATIONS_TABLE)
        for v in range(await current(cur) + 1, last + 1):
            for statement in _sql.MIGRATIONS[v]:
                await cur.execute(statement)
            await cur.execute(_sql.INSERT_VERSION, (v,))


class AsyncPostgresSaver(AsyncSqlLeases, PostgresCore):
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
        self._init_delta(delta_storage, intern_items)
        self.ttl = check_ttl(ttl, type(self).__name__)
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
            raise LeaseLostError(
                str(check[0][1][0]),
                int(check[0][1][1]),
                "it expired or another run took the thread over",
            ) from None

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
            raise LeaseLostError(
                str(fenced[0][1][0]),
                int(fenced[0][1][1]),
                "it expired or another run took the thread over",
            ) from None
        return done

    async def _alease_run(self, op: Op, single: bool = False) -> Any:
        """Run a lease operation in one transaction (tables made on first use); a
        ``single``-statement one runs on its own (atomic, one round trip)."""
        if not getattr(self, "_lease_tables", False):
            async with self._connection() as conn, conn.transaction():
                async with conn.cursor(row_factory=tuple_row) as cur:
                    await cur.execute(_sql.LOCK_SETUP, (_sql.SETUP_LOCK_KEY,))
                    for statement in POSTGRES.ddl:
                        await cur.execute(statement)
            self._lease_tables = True
        if single:
            async with self._connection() as conn, conn.cursor(row_factory=tuple_row) as cur:
                return await arun_psycopg(cur, op)
        async with self._connection() as conn, conn.transaction():
            async with conn.cursor(row_factory=tuple_row) as cur:
                return await arun_psycopg(cur, op)

    async def setup(self) -> None:
        """Create the tables and apply missing migrations (idempotent; runs on first
        use too). Safe when several processes call it at once."""
        async with self.lock:
            if self.is_setup:
                return
            async with self._connection() as conn:
                await _amigrate(conn)
                async with conn.cursor(row_factory=tuple_row) as cur:
                    await cur.execute(_sql.CHECK_FORMAT)
                    check_format(await cur.fetchone())
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
        return await self._run_plan(self.get_tuple_plan(config))

    async def _run_plan(self, plan: Plan[T], *, transaction: bool = False) -> T:
        """Run a plan of the core (see :data:`~._base.Plan`) on one connection; with
        ``transaction``, in one transaction."""
        if not self.is_setup:
            await self.setup()
        async with self._connection() as conn:
            async with (
                conn.transaction() if transaction else nullcontext(),
                conn.cursor(row_factory=tuple_row) as cur,
            ):
                return await _drive(cur, plan)

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
            for item in await self._run_plan(self.list_page_plan(query)):
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
        check = self.base_check_params(params)
        token = lease_token(config)
        fenced = (
            pg_fence_statements(params["thread_id"], token, params["ns"], checkpoint["id"])
            if token is not None
            else []
        )
        if check is not None or params["item_hashes"]:
            done = await self._put_on_bases(params, check, fenced)
        else:
            params, done = self.finish_put_params(params, None)
            if not fenced:
                await self._execute(_sql.PUT, params)
            else:
                await self._execute_fenced(fenced, _sql.PUT, params)
        if self.ttl is not None:
            await self._execute(_sql.TOUCH, {"thread_id": params["thread_id"], "at": time.time()})
        if self.delta is not None:
            for entry in done:
                self.delta.commit(entry)
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
        if params is None:
            return
        token = lease_token(config)
        check = (
            pg_fence_statements(params["thread_id"], token, params["ns"], None)
            if token is not None
            else []
        )
        if params["item_hashes"]:
            # new references to items: hold the retention lock (shared) while saving
            check = [*check, (_sql.LOCK_BASES_SHARED_POS, (params["thread_id"],))]
            await self._execute_fenced(check, _sql.PUT_WRITES, params)
        elif token is None:
            await self._execute(_sql.PUT_WRITES, params)
        else:
            await self._execute_fenced(check, _sql.PUT_WRITES, params)
        if self.ttl is not None:
            await self._execute(_sql.TOUCH, {"thread_id": params["thread_id"], "at": time.time()})

    async def adelete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint, write and value of ``thread_id`` atomically."""
        check_ids("adelete_thread", thread_id=thread_id)
        await self._execute(_sql.DELETE_THREAD, {"thread_id": str(thread_id)})
        await self._execute(_sql.DELETE_TTL, {"thread_id": str(thread_id)})
        if self.delta is not None:
            self.delta.forget(str(thread_id))

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
            yield from self._sync("list", lambda: self._run_plan(self.list_page_plan(query)))

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
        check_ids("aprune", thread_ids=thread_ids)
        ids, n = check_prune_args(thread_ids, strategy, keep_last, type(self).__name__)
        for tid in ids:
            if strategy == "delete":
                await self.adelete_thread(tid)
                continue
            await self._retain(tid, choose_latest(n))

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints (and their writes) whose metadata ``run_id`` is in
        ``run_ids``, in every thread (one transaction per thread); one a remaining
        checkpoint needs to rebuild its ``DeltaChannel`` values stays."""
        check_ids("adelete_for_runs", run_ids=run_ids)
        wanted = [str(r) for r in run_ids]
        if not wanted:
            return
        rows = await self._fetch(_sql.THREADS_OF_RUNS, {"runs": wanted})
        for (tid,) in rows:
            await self._retain(tid, choose_without_runs(set(wanted)))

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
        if self.ttl is None:
            return 0
        cutoff = time.time() - self.ttl["default_ttl"] * 60.0
        count = 0
        for (tid,) in await self._fetch(_sql.EXPIRED, {"cutoff": cutoff}):
            # one statement: a thread written since the scan is not expired any more
            await self._execute(_sql.DELETE_EXPIRED, {"thread_id": tid, "cutoff": cutoff})
            if self.delta is not None:
                self.delta.forget(tid)
            count += 1
        return count

    async def _retain(
        self, tid: str, choose: Callable[[Sequence[CheckpointTuple]], set[tuple[str, str]] | None]
    ) -> None:
        if not self.is_setup:
            await self.setup()
        async with self._connection() as conn:
            # before the transaction: its snapshot must see what writers that held the
            # lock committed (see _sql.LOCK_BASES)
            await conn.execute(_sql.LOCK_BASES, {"thread_id": tid})
            try:
                async with conn.transaction(), conn.cursor(row_factory=tuple_row) as cur:
                    await cur.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                    await _drive(cur, self.retain_gen(tid, choose))
            finally:
                if not conn.closed:  # a lost session released the lock with it
                    await conn.execute(_sql.UNLOCK_BASES, {"thread_id": tid})
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
            raise ValueError(
                "AsyncPostgresSaver.start_ttl_sweeper() needs a ttl: "
                "AsyncPostgresSaver(conn, ttl={'default_ttl': minutes})."
            )
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
        conf = saved.config["configurable"]
        rows = await self._fetch(
            _sql.TASK_PATHS,
            {
                "thread_id": conf["thread_id"],
                "ns": conf.get("checkpoint_ns", ""),
                "checkpoint_id": conf["checkpoint_id"],
            },
        )
        return {task_id: path for task_id, path in rows}


def __getattr__(name: str) -> Any:
    """``AsyncShallowPostgresSaver`` lives in :mod:`.shallow` (imported on first use)."""
    if name == "AsyncShallowPostgresSaver":
        from stategraph.checkpoint.postgres.shallow import AsyncShallowPostgresSaver

        return AsyncShallowPostgresSaver
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
