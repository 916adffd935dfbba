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
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Union

try:
    import psycopg
    from psycopg.rows import tuple_row
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "stategraph.checkpoint.postgres needs psycopg 3, which is not installed: "
        'pip install "stategraph[postgres]"'
    ) from exc

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
    from psycopg_pool import ConnectionPool

__all__ = ["PostgresSaver"]

Conn = Union["psycopg.Connection[Any]", "ConnectionPool[Any]"]
"""A psycopg connection (in autocommit mode) or a ``psycopg_pool.ConnectionPool``."""


def _migrate(conn: psycopg.Connection[Any]) -> None:
    """Apply the missing migrations in order, in one transaction holding the setup
    advisory lock (so concurrent ``setup()`` calls apply each exactly once)."""

    def current(cur: psycopg.Cursor[Any]) -> int:
        cur.execute(_sql.MIGRATIONS_TABLE_EXISTS)
        row = cur.fetchone()
        if not row or not row[0]:
            return -1
        cur.execute(_sql.MAX_VERSION)
        row = cur.fetchone()
        return -1 if row is None else int(row[0])

    last = len(_sql.MIGRATIONS) - 1
    with conn.cursor(row_factory=tuple_row) as cur:
        if current(cur) >= last:
            return
    with conn.transaction(), conn.cursor(row_factory=tuple_row) as cur:
        cur.execute(_sql.LOCK_SETUP, (_sql.SETUP_LOCK_KEY,))
        cur.execute(_sql.CREATE_MIGRATIONS_TABLE)
        for v in range(current(cur) + 1, last + 1):
            for statement in _sql.MIGRATIONS[v]:
                cur.execute(statement)
            cur.execute(_sql.INSERT_VERSION, (v,))


class PostgresSaver(PostgresCore):
    """Checkpoint saver backed by PostgreSQL through psycopg 3.

    ``PostgresSaver(conn)`` takes a :class:`psycopg.Connection` opened with
    ``autocommit=True`` (as LangGraph's saver expects; another mode is refused with an
    error saying so) or a ``psycopg_pool.ConnectionPool``. One connection is safe to
    share between threads: each saver call is a single statement. A pool lets calls
    from several threads run in parallel. The saver works with any row factory set on
    the connection, and uses the tables of the connection's ``search_path``.

    Versions are strings (``get_next_version``), like the other bundled savers.
    """

    def __init__(self, conn: Conn, *, serde: SerializerProtocol | None = None) -> None:
        """Wrap ``conn`` (connection or pool); ``serde`` defaults to ``JsonPlusSerializer()``."""
        super().__init__(serde=serde)
        if isinstance(conn, psycopg.Connection):
            if not conn.autocommit:
                raise autocommit_error(type(self).__name__)
            self.conn: psycopg.Connection[Any] | None = conn
            self.pool: ConnectionPool[Any] | None = None
        elif callable(getattr(conn, "connection", None)):
            self.conn = None
            self.pool = conn
        else:
            raise TypeError(
                f"{type(self).__name__} needs a psycopg.Connection or a "
                f"psycopg_pool.ConnectionPool, got {type(conn).__name__}; for an async "
                "connection use stategraph.checkpoint.postgres.aio.AsyncPostgresSaver."
            )
        self.lock = threading.Lock()
        self.is_setup = False

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
        yield conn

    def setup(self) -> None:
        """Create the tables and apply missing migrations (idempotent; runs on first
        use too). Safe when several processes call it at once."""
        with self.lock:
            if self.is_setup:
                return
            with self._connection() as conn:
                _migrate(conn)
            self.is_setup = True

    def _fetch(self, sql: str, params: Any) -> list[tuple[Any, ...]]:
        if not self.is_setup:
            self.setup()
        with self._connection() as conn, conn.cursor(row_factory=tuple_row) as cur:
            cur.execute(sql, params)
            return cur.fetchall()

    def _execute(self, sql: str, params: Any) -> None:
        if not self.is_setup:
            self.setup()
        with self._connection() as conn, conn.cursor(row_factory=tuple_row) as cur:
            cur.execute(sql, params)

    # -- reading ---------------------------------------------------------------

    def get_tuple(self, config: dict[str, Any]) -> CheckpointTuple | None:
        """Return the checkpoint named by ``config`` or the latest of its
        ``(thread_id, checkpoint_ns)``, with its pending writes; ``None`` if absent."""
        sql, params = self.get_tuple_statement(config)
        rows = self._fetch(sql, params)
        return self.row_to_tuple(rows[0]) if rows else None

    def list(
        self,
        config: dict[str, Any] | None,
        *,
        filter: dict[str, Any] | None = None,
        before: dict[str, Any] | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Yield matching checkpoints newest first (see ``BaseCheckpointSaver.list``).

        Results are read in pages of 100, one statement each; metadata filters run in
        SQL with bound parameters (entries SQL cannot decide exactly run in Python).
        """
        query = ListQuery(config, filter, before, limit)
        while not query.done:
            sql, params, page = query.next_statement()
            yield from query.take(self, self._fetch(sql, params), page)

    # -- writing ---------------------------------------------------------------

    def put(
        self,
        config: dict[str, Any],
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> dict[str, Any]:
        """Save ``checkpoint`` atomically (its new channel values and its row in one
        statement) and return the config naming it. ``config``'s ``checkpoint_id`` is
        recorded as the parent."""
        params = self.put_params(config, checkpoint, metadata, new_versions)
        self._execute(_sql.PUT, params)
        return checkpoint_config(params["thread_id"], params["ns"], checkpoint["id"])

    def put_writes(
        self,
        config: dict[str, Any],
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Save task ``task_id``'s writes atomically: special channels replace,
        regular writes are kept only if absent."""
        params = self.put_writes_params(config, writes, task_id, task_path)
        if params is not None:
            self._execute(_sql.PUT_WRITES, params)

    def delete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint, write and value of ``thread_id`` atomically."""
        self._execute(_sql.DELETE_THREAD, {"thread_id": str(thread_id)})
