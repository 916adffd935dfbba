"""The PostgreSQL store: :class:`PostgresStore` (LangGraph's ``PostgresStore`` API).

Long-term memory in PostgreSQL through psycopg 3 (the optional ``postgres`` extra):
batches of get/put/delete/search/list-namespaces operations each run in one
transaction; items may expire (``ttl=``, :meth:`PostgresStore.sweep_ttl`, an optional
background sweeper); semantic search (``index=``) ranks in SQL, with the ``vector``
extension (pgvector) when the server has it, else over ``real[]`` columns.

It takes a connection or a ``psycopg_pool.ConnectionPool``; :meth:`setup` creates or
migrates its tables (``sg_store*``, versioned in ``sg_store_migrations``) and runs
automatically on first use. See :mod:`stategraph.store.postgres._backend` for the
schema.

Example::

    with PostgresStore.from_conn_string("postgresql://localhost/app") as store:
        store.put(("users", "alice"), "prefs", {"theme": "dark"})
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from stategraph._migrations import pending_migrations
from stategraph.store._engine import LocalStore, Plan, Vectors, execute
from stategraph.store.base import IndexConfig, Result, TTLConfig
from stategraph.store.postgres._backend import (
    MIGRATIONS,
    MIGRATIONS_TABLE,
    PgBackend,
    VectorMode,
    json_loader,
    split_index_config,
    vector_statements,
)

if TYPE_CHECKING:
    import psycopg

__all__ = ["PostgresStore", "PoolConfig", "VectorChoice", "MIGRATIONS"]

VectorChoice = Literal["auto", "pgvector", "array"]
"""How vectors are stored: ``"pgvector"`` (the ``vector`` extension), ``"array"``
(``real[]``, ranked by SQL arithmetic) or ``"auto"`` (pgvector when available)."""


class PoolConfig(TypedDict, total=False):
    """Connection pool settings of ``from_conn_string(pool_config=...)`` (as LangGraph's)."""

    min_size: int
    max_size: int | None
    kwargs: dict[str, Any]


def _tuple_cursor(conn: Any) -> Any:
    from psycopg.rows import tuple_row

    return conn.cursor(row_factory=tuple_row)


def make_runner(cur: Any) -> Callable[[str, Sequence[Any], bool], list[tuple[Any, ...]]]:
    """A backend runner over a sync psycopg cursor."""

    def run(sql: str, params: Sequence[Any], fetch: bool) -> list[tuple[Any, ...]]:
        cur.execute(sql, params)
        return cur.fetchall() if fetch else []

    return run


class SetupSteps:
    """The migration and vector-mode decisions, shared by the sync and async stores.

    Each method takes a ``run(sql, params, fetch)`` executing inside one transaction.
    """

    @staticmethod
    def migrate(
        run: Callable[[str, Sequence[Any], bool], list[tuple[Any, ...]]], now: float
    ) -> None:
        """Apply pending migrations (serialized across processes by an advisory lock)."""
        run(MIGRATIONS_TABLE, (), False)
        run("SELECT pg_advisory_xact_lock(hashtext('sg_store_migrations'))", (), True)
        rows = run("SELECT MAX(v) FROM sg_store_migrations", (), True)
        version = rows[0][0] or 0
        for v in pending_migrations("The store schema in this database", version, MIGRATIONS):
            for statement in MIGRATIONS[v]:
                run(statement, (), False)
            run(
                "INSERT INTO sg_store_migrations (v, applied_at) VALUES (%s, %s)",
                (v + 1, now),
                False,
            )

    @staticmethod
    def vector_state(
        run: Callable[[str, Sequence[Any], bool], list[tuple[Any, ...]]],
    ) -> tuple[bool, bool]:
        """``(vec column exists, extension installed or installable)``."""
        has_column = bool(
            run(
                "SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() "
                "AND table_name = 'sg_store_vectors' AND column_name = 'vec'",
                (),
                True,
            )
        )
        available = bool(
            run("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'", (), True)
        )
        return has_column, available

    @staticmethod
    def setup(
        run: Callable[[str, Sequence[Any], bool], list[tuple[Any, ...]]],
        now: float,
        index: Any,
        choice: VectorChoice,
    ) -> VectorMode:
        """Migrate, then decide the vector mode for ``index`` (``None``: no search
        index) and add the ``vec`` column pgvector needs; return the mode."""
        SetupSteps.migrate(run, now)
        if index is None:
            return "array"
        has_column, available = SetupSteps.vector_state(run)
        mode = resolve_mode(choice, has_column, available)
        if mode == "pgvector" and not has_column:
            for statement in vector_statements(index.dims):
                run(statement, (), False)
        return mode

    @staticmethod
    def batch(
        run: Callable[[str, Sequence[Any], bool], list[tuple[Any, ...]]],
        store: Any,
        plan: Plan,
        vectors: Vectors,
        now: float,
    ) -> list[Result]:
        """Run one batch of ``store`` (inside one transaction) and apply its TTL refreshes."""
        backend = PgBackend(run, store.vector_mode, store._loads)
        results = execute(backend, plan, vectors, now, store._stamp)
        backend.apply_refreshes()
        return results


def pool_kwargs(pool_config: PoolConfig) -> dict[str, Any]:
    """The ``psycopg_pool`` arguments for ``from_conn_string(pool_config=...)``."""
    return {
        "min_size": pool_config.get("min_size", 1),
        "max_size": pool_config.get("max_size"),
        "kwargs": {"autocommit": True, **(pool_config.get("kwargs") or {})},
    }


def resolve_mode(choice: VectorChoice, has_column: bool, available: bool) -> VectorMode:
    """The vector mode for ``choice`` given what the database has."""
    if choice == "array":
        return "array"
    if has_column or available:
        return "pgvector"
    if choice == "pgvector":
        raise RuntimeError(
            "vector='pgvector' needs the PostgreSQL 'vector' extension (pgvector), which this "
            "server does not have. Install pgvector on the server, or use vector='array' "
            "(or 'auto') to store embeddings in real[] columns and rank them in SQL."
        )
    return "array"


def check_vector_choice(choice: Any) -> VectorChoice:
    """Validate the ``vector=`` argument."""
    if choice not in ("auto", "pgvector", "array"):
        raise ValueError(f"vector must be 'auto', 'pgvector' or 'array', got {choice!r}.")
    return choice


class PostgresStore(LocalStore):
    """A store in PostgreSQL (sync API; use :class:`AsyncPostgresStore` with asyncio).

    Args:
        conn: a ``psycopg.Connection`` (autocommit recommended; any row factory) or a
            ``psycopg_pool.ConnectionPool``. Not closed by the store.
        deserializer: turns stored JSON bytes into a value (default ``json.loads``).
        index: semantic search config: ``{"dims", "embed", "fields"}``, plus LangGraph's
            ``distance_type`` (``"cosine"``) and ``ann_index_config`` (``{"kind":
            "flat"}``: exact search).
        ttl: :class:`~stategraph.store.base.TTLConfig` (minutes); a
            ``sweep_interval_minutes`` starts the background sweeper.
        vector: ``"auto"`` (default), ``"pgvector"`` or ``"array"``; see
            :data:`VectorChoice`.
        pipeline: run each batch in psycopg pipeline mode (fewer round trips).
    """

    MIGRATIONS = MIGRATIONS
    supports_ttl = True

    def __init__(
        self,
        conn: psycopg.Connection[Any] | Any,
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
        self._lock = threading.RLock()
        self._stamp_lock = threading.Lock()
        self._loads = json_loader(deserializer)
        self._vector_choice = check_vector_choice(vector)
        self.vector_mode: VectorMode = "array"
        """How vectors are stored, decided by :meth:`setup`."""
        self.pipeline = pipeline
        self.is_setup = False
        self._owned: Any = None
        super().__init__(index=common, ttl=ttl)
        self.index_config = index

    @classmethod
    @contextmanager
    def from_conn_string(
        cls,
        conn_string: str,
        *,
        pipeline: bool = False,
        pool_config: PoolConfig | None = None,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        vector: VectorChoice = "auto",
    ) -> Iterator[PostgresStore]:
        """Open a store on ``conn_string`` (a pool with ``pool_config``); close it on exit."""
        import psycopg

        owned: Any
        if pool_config is not None:
            from psycopg_pool import ConnectionPool

            owned = ConnectionPool(conn_string, **pool_kwargs(pool_config), open=True)
        else:
            owned = psycopg.connect(conn_string, autocommit=True)
        store: PostgresStore | None = None
        try:
            store = cls(owned, index=index, ttl=ttl, vector=vector, pipeline=pipeline)
            store._owned = owned
            yield store
        finally:
            if store is not None:
                store.stop_ttl_sweeper()
            owned.close()

    def close(self) -> None:
        """Stop the sweeper; close the connection or pool if ``from_conn_string`` opened it."""
        self.stop_ttl_sweeper()
        if self._owned is not None:
            self._owned.close()

    def _stamp(self) -> float:
        with self._stamp_lock:
            return super()._stamp()

    @contextmanager
    def _connection(self) -> Iterator[Any]:
        if self._is_pool:
            with self.conn.connection() as conn:
                yield conn
        else:
            with self._lock:
                yield self.conn

    @contextmanager
    def _transaction(self) -> Iterator[Callable[[str, Sequence[Any], bool], list[tuple[Any, ...]]]]:
        with self._connection() as conn:
            if self.pipeline:
                with conn.pipeline(), conn.transaction(), _tuple_cursor(conn) as cur:
                    yield make_runner(cur)
            else:
                with conn.transaction(), _tuple_cursor(conn) as cur:
                    yield make_runner(cur)

    def setup(self) -> None:
        """Create or migrate the tables, and the vector column if pgvector is used."""
        if self.is_setup:
            return
        with self._transaction() as run:
            self.vector_mode = SetupSteps.setup(run, self._now(), self._index, self._vector_choice)
        self.is_setup = True

    def _execute(self, plan: Plan, vectors: Vectors) -> list[Result]:
        if not self.is_setup:
            self.setup()
        with self._transaction() as run:
            return SetupSteps.batch(run, self, plan, vectors, self._now())

    async def _aexecute(self, plan: Plan, vectors: Vectors) -> list[Result]:
        import asyncio

        return await asyncio.to_thread(self._execute, plan, vectors)

    def sweep_ttl(self) -> int:
        """Delete expired items now; return how many were deleted."""
        if not self.is_setup:
            self.setup()
        with self._transaction() as run:
            return PgBackend(run, self.vector_mode, self._loads).sweep(self._now())

    async def asweep_ttl(self) -> int:
        """Async twin of :meth:`sweep_ttl` (runs on a worker thread)."""
        import asyncio

        return await asyncio.to_thread(self.sweep_ttl)
