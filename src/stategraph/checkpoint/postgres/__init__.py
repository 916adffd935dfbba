"""``PostgresSaver``: the production checkpoint saver, on PostgreSQL (psycopg 3).

Install the optional extra: ``pip install "stategraph[postgres]"``. Usage::

    from stategraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string("postgresql://user@host:5432/db") as saver:
        saver.setup()  # optional: also runs on first use
        graph = builder.compile(checkpointer=saver)

Tables (all prefixed ``sg_``; see ``_sql.py``): ``sg_checkpoints`` (one row per
checkpoint, without channel values; metadata also as JSONB), ``sg_checkpoint_blobs``
(channel values, once per ``(thread, namespace, channel, version)``),
``sg_checkpoint_writes`` (pending writes) and ``sg_checkpoint_migrations``.

Every operation is one SQL statement, so each is atomic and reads one snapshot, and
one autocommit connection can serve every thread of a run. For the async API see
:mod:`stategraph.checkpoint.postgres.aio`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from typing import TYPE_CHECKING, Any, TypeVar, Union

from stategraph._optional import requires_extra

with requires_extra(
    "stategraph.checkpoint.postgres needs psycopg 3, which is not installed: "
    'pip install "stategraph[postgres]"'
):
    import psycopg
    from psycopg.rows import tuple_row

from stategraph.checkpoint._list_delta import Pending
from stategraph.checkpoint._retention import (
    PruneStrategy,
    Sweeper,
    SweeperThread,
    TTLConfig,
    check_ttl,
)
from stategraph.checkpoint.base import CheckpointTuple, Config, Filter, SerializerProtocol
from stategraph.checkpoint.lease_savers import SqlLeases
from stategraph.checkpoint.lease_sql import (
    POSTGRES,
    Op,
    Statement,
    run_psycopg,
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
    format_plan,
    lease_lost,
    lease_tables_plan,
    migrate_plan,
    performed,
    setup_needed_plan,
)
from stategraph.checkpoint.postgres._drivers import drive_on, drive_retained

T = TypeVar("T")

if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool

__all__ = ["PostgresSaver"]

Conn = Union["psycopg.Connection[Any]", "ConnectionPool[Any]"]
"""A psycopg connection (in autocommit mode) or a ``psycopg_pool.ConnectionPool``."""


class PostgresSaver(SweeperThread, SqlLeases, PostgresCalls):
    """Checkpoint saver backed by PostgreSQL through psycopg 3.

    ``PostgresSaver(conn)`` takes a :class:`psycopg.Connection` opened with
    ``autocommit=True`` (as LangGraph's saver expects; another mode is refused with an
    error saying so) or a ``psycopg_pool.ConnectionPool``. One connection is safe to
    share between threads: each saver call is a single statement. A pool lets calls
    from several threads run in parallel. The saver works with any row factory set on
    the connection, and uses the tables of the connection's ``search_path``.

    Versions are strings (``get_next_version``), like the other bundled savers.
    Per-thread leases live in the database (:mod:`stategraph.checkpoint.lease_sql`);
    a leased run's write and its fencing check run in one transaction, so calls on one
    shared connection take turns (a pool runs them in parallel).
    """

    _lease_dialect = POSTGRES
    _sweeper_name = "stategraph-ttl-postgres"

    def __init__(
        self,
        conn: Conn,
        *,
        serde: SerializerProtocol | None = None,
        delta_storage: bool = True,
        ttl: TTLConfig | None = None,
        intern_items: bool = True,
    ) -> None:
        """Wrap ``conn`` (connection or pool); ``serde`` defaults to ``JsonPlusSerializer()``.

        ``delta_storage`` (default on) stores a new version of a list value as the
        change from the version stored before it (see the persistence guide);
        ``False`` stores every version whole. Either way every stored format is read.
        ``ttl`` (``{"default_ttl": minutes, ...}``) lets :meth:`sweep` delete threads
        not written (or read) for that long.
        """
        super().__init__(serde=serde)
        self._init_values(delta_storage, intern_items)
        self.ttl = check_ttl(ttl, type(self).__name__)
        self._sweeper: Sweeper | None = None
        self.conn: psycopg.Connection[Any] | None
        self.pool: ConnectionPool[Any] | None
        self.conn, self.pool = accept_conn(
            type(self).__name__,
            conn,
            psycopg.Connection,
            "; for an async connection use stategraph.checkpoint.postgres.aio.AsyncPostgresSaver",
        )
        self.lock = threading.Lock()
        self.is_setup = False
        self._conn_lock = threading.RLock()

    @classmethod
    @contextmanager
    def from_conn_string(cls, conn_string: str) -> Iterator[PostgresSaver]:
        """Connect to ``conn_string`` (autocommit), yield a saver, then close.

        Usage: ``with PostgresSaver.from_conn_string("postgresql://...") as saver: ...``
        """
        with psycopg.connect(conn_string, autocommit=True) as conn:
            yield cls(conn)

    # -- plumbing --------------------------------------------------------------

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        if self.pool is not None:
            with self.pool.connection() as conn:
                yield conn
            return
        conn = self.conn
        assert conn is not None
        if not conn.autocommit:
            raise autocommit_error(type(self).__name__)
        with self._conn_lock:  # a transaction of one call must not take in another's
            yield conn

    def setup(self) -> None:
        """Create the tables and apply missing migrations (idempotent; runs on first
        use too). Safe when several processes call it at once."""
        with self.lock:
            if self.is_setup:
                return
            with self._connection() as conn:
                if drive_on(conn, setup_needed_plan("PostgresSaver")):
                    drive_on(conn, migrate_plan(), transaction=True)
                drive_on(conn, format_plan())
            self.is_setup = True

    def _perform(self, calls: Calls[T]) -> T:
        """Carry out a saver call of the core (see :data:`~._calls.Calls`)."""
        more, step = advance(calls, None)
        while more:
            more, step = advance(calls, getattr(self, step[0])(*step[1]))
        done: T = step
        return done

    def _fetch(self, sql: str, params: Any) -> list[tuple[Any, ...]]:
        """Run one statement on its own; its rows (``[]`` when it has none)."""
        if not self.is_setup:
            self.setup()
        with self._connection() as conn, conn.cursor(row_factory=tuple_row) as cur:
            cur.execute(sql, params)
            return cur.fetchall() if cur.description is not None else []

    def _execute_fenced(self, check: list[Statement], sql: str, params: Any) -> None:
        """Run the fence ``check`` and ``sql`` in one transaction, pipelined (one round
        trip): a failed fence aborts the transaction before ``sql`` can commit.

        On an autocommit connection the statements go out before a single Sync, so
        they form one *implicit* transaction (committed at the Sync, rolled back
        whole when any of them fails): no BEGIN/COMMIT round trips. A connection
        that is not in autocommit mode (a pool configured so) gets an explicit one."""
        if not self.is_setup:
            self.setup()
        try:
            with self._connection() as conn, conn.pipeline():
                with (
                    nullcontext() if conn.autocommit else conn.transaction(),
                    conn.cursor(row_factory=tuple_row) as cur,
                ):
                    for statement, args in check:
                        cur.execute(statement, args)
                    cur.execute(sql, params)
        except psycopg.errors.DivisionByZero:
            raise lease_lost(check) from None

    def _put_on_bases(
        self, params: dict[str, Any], check: dict[str, Any] | None, fenced: list[Statement]
    ) -> list[Pending]:
        """Save a checkpoint holding deltas or interned items in one transaction: lock
        the thread's delta bases and items against retention (shared), check the bases
        are stored (a delta whose base is gone is stored whole), fence, save. Two round
        trips (one without deltas)."""
        if not self.is_setup:
            self.setup()
        try:
            with self._connection() as conn, conn.transaction():
                with conn.cursor(row_factory=tuple_row) as cur:
                    existing = None
                    with conn.pipeline():
                        cur.execute(_sql.LOCK_BASES_SHARED, {"thread_id": params["thread_id"]})
                        if check is not None:
                            cur.execute(_sql.EXISTING_BLOBS, check)
                            existing = cur.fetchall()
                    params, done = self.finish_put_params(params, existing)
                    with conn.pipeline():
                        for statement, args in fenced:
                            cur.execute(statement, args)
                        cur.execute(_sql.PUT, params)
        except psycopg.errors.DivisionByZero:
            raise lease_lost(fenced) from None
        return done

    def _lease_run(self, op: Op, single: bool = False) -> Any:
        """Run a lease operation in one transaction (tables made on first use); a
        ``single``-statement one runs on its own (atomic, one round trip)."""
        if not getattr(self, "_lease_tables", False):
            with self._connection() as conn:
                drive_on(conn, lease_tables_plan(), transaction=True)
            self._lease_tables = True
        with self._connection() as conn:
            with (
                nullcontext() if single else conn.transaction(),
                conn.cursor(row_factory=tuple_row) as cur,
            ):
                return run_psycopg(cur, op)

    def _run_plan(self, plan: Plan[T], *, transaction: bool = False, snapshot: bool = False) -> T:
        """Run a plan of the core (see :data:`~._base.Plan`) on one connection; with
        ``transaction``, in one transaction; with ``snapshot``, in one REPEATABLE READ
        transaction."""
        if not self.is_setup:
            self.setup()
        with self._connection() as conn:
            return drive_on(conn, plan, transaction=transaction, snapshot=snapshot)

    def _read(self, plan_of: Callable[[bool], Plan[T]]) -> T:
        """Run the read ``plan_of(True)``; again as ``plan_of(False)`` in one snapshot
        when values it needs were deleted between its statements (:data:`~._base.Plan`)."""
        try:
            return self._run_plan(plan_of(True))
        except ValueError:
            return self._run_plan(plan_of(False), snapshot=True)

    # -- reading ---------------------------------------------------------------

    def get_tuple(self, config: dict[str, Any]) -> CheckpointTuple | None:
        """Return the checkpoint named by ``config`` or the latest of its
        ``(thread_id, checkpoint_ns)``, with its pending writes; ``None`` if absent."""
        statement = self.get_tuple_statement(config)
        return self._read(lambda first: self._get_tuple_plan(statement, first))

    def _list(
        self, config: Config | None, filter: Filter, before: Config | None, limit: int | None
    ) -> Iterator[CheckpointTuple]:
        """``list``: read in pages of 100, one statement each; metadata filters run in
        SQL with bound parameters (entries SQL cannot decide exactly run in Python)."""
        query = ListQuery(config, filter, before, limit)
        while not query.done:
            yield from self._read(lambda _: self.list_page_plan(query))

    # -- writing ---------------------------------------------------------------

    _put = performed(PostgresCalls.put_calls)
    _put_writes = performed(PostgresCalls.put_writes_calls)

    def delete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint, write and value of ``thread_id`` atomically."""
        self._perform(self.delete_thread_calls(thread_id, "delete_thread"))

    # -- retention ---------------------------------------------------------------

    def prune(
        self,
        thread_ids: Sequence[str],
        *,
        strategy: PruneStrategy = "keep_latest",
        keep_last: int | None = None,
    ) -> None:
        """Shrink the history of ``thread_ids``, each in one REPEATABLE READ
        transaction (``"keep_latest"`` / ``"delete"``: "Retention" in
        docs/persistence.md); autovacuum reclaims the space."""
        self._perform(self.prune_calls(thread_ids, strategy, keep_last, "prune"))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints (and their writes) whose metadata ``run_id`` is in
        ``run_ids``, in every thread (one transaction per thread); one a remaining
        checkpoint needs to rebuild its ``DeltaChannel`` values stays."""
        self._perform(self.delete_for_runs_calls(run_ids, "delete_for_runs"))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint, write and value of one thread to a new thread id
        (checkpoint ids, parents and metadata unchanged), in one transaction. The target
        must be empty."""
        self._run_plan(self.copy_plan(source_thread_id, target_thread_id), transaction=True)

    def sweep(self) -> int:
        """Delete the threads whose time to live ran out; return how many.

        A thread lives ``ttl["default_ttl"]`` minutes after its last write (or read,
        with ``refresh_on_read``), recorded in the database, so any process sweeping
        sees every process's activity. Without ``ttl`` nothing expires.
        """
        return self._perform(self.sweep_calls())

    def _retain(
        self, tid: str, choose: Callable[[Sequence[CheckpointTuple]], set[tuple[str, str]] | None]
    ) -> None:
        if not self.is_setup:
            self.setup()
        with self._connection() as conn:
            drive_retained(conn, tid, self.retain_gen(tid, choose))
        if self.delta is not None:
            self.delta.forget(tid)

    def _task_paths(self, saved: CheckpointTuple) -> dict[str, str]:
        """Task id -> saved task path of the pending writes of ``saved``."""
        return self._perform(self.task_paths_calls(saved))


def __getattr__(name: str) -> Any:
    """``ShallowPostgresSaver`` lives in :mod:`.shallow` (imported on first use)."""
    if name == "ShallowPostgresSaver":
        from stategraph.checkpoint.postgres.shallow import ShallowPostgresSaver

        return ShallowPostgresSaver
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
