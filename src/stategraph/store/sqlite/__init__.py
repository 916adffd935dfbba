"""The embedded default store on the standard library's ``sqlite3``.

* One connection (``check_same_thread=False``) guarded by a lock: usable from many
  threads. WAL mode, a ``busy_timeout`` and ``BEGIN IMMEDIATE`` for writes make it
  safe to share one database file between processes too.
* Values are stored as JSON text; timestamps as epoch seconds.
* Filters are evaluated in Python on rows fetched by namespace prefix: no filter key
  or value ever becomes part of an SQL statement.
* Semantic search vectors are float32 blobs (``array('f')``), compared in Python.
* The schema is versioned in ``sg_store_migrations``; :meth:`SqliteStore.setup`
  applies pending migrations and is called automatically on first use.

Its asyncio twin, :class:`~stategraph.store.sqlite.aio.AsyncSqliteStore`, lives in
:mod:`stategraph.store.sqlite.aio` (LangGraph's module path) and is also importable
from here (loaded on first use).

Example::

    with SqliteStore.from_conn_string("memory.db") as store:
        store.put(("users", "alice"), "prefs", {"theme": "dark"})
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from stategraph._lazy import lazy_attributes
from stategraph._migrations import pending_migrations
from stategraph.store._embed import pack_vector, unpack_vector
from stategraph.store._engine import (
    Backend,
    Key,
    LocalStore,
    Plan,
    Record,
    Scan,
    Vectors,
    execute,
    item_json,
    upsert_item,
    upsert_params,
)
from stategraph.store._sqlite_filter import sql_prefilter
from stategraph.store.base import IndexConfig, Result, TTLConfig

if TYPE_CHECKING:
    from stategraph.store.sqlite.aio import AsyncSqliteStore

__all__ = ["SqliteStore", "AsyncSqliteStore", "MIGRATIONS"]

__getattr__, __dir__ = lazy_attributes(
    __name__, {"AsyncSqliteStore": "stategraph.store.sqlite.aio"}, globals()
)

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE IF NOT EXISTS sg_store (
            prefix TEXT NOT NULL,
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            expires_at REAL,
            ttl_minutes REAL,
            PRIMARY KEY (prefix, key)
        )""",
        "CREATE INDEX IF NOT EXISTS sg_store_updated_at ON sg_store (updated_at)",
        """CREATE INDEX IF NOT EXISTS sg_store_expires_at ON sg_store (expires_at)
            WHERE expires_at IS NOT NULL""",
    ),
    (
        """CREATE TABLE IF NOT EXISTS sg_store_vectors (
            prefix TEXT NOT NULL,
            key TEXT NOT NULL,
            seq INTEGER NOT NULL,
            field TEXT NOT NULL,
            embedding BLOB NOT NULL,
            PRIMARY KEY (prefix, key, seq)
        )""",
    ),
)
"""Schema migrations; migration ``i`` brings the schema to version ``i + 1``."""

_LIVE = "(expires_at IS NULL OR expires_at > ?)"
_COLUMNS = "prefix, key, value, created_at, updated_at, expires_at, ttl_minutes"
_UPSERT = upsert_item("?", "?")


def _prefix_clause(prefix: tuple[str, ...]) -> tuple[str, list[Any]]:
    """SQL condition (and its parameters) selecting namespaces under ``prefix``.

    Labels cannot contain ``'.'``, so ``a.b`` and everything in ``["a.b.", "a.b/")``
    (``'/'`` follows ``'.'``) are exactly the namespaces starting with ``("a", "b")``.
    """
    if not prefix:
        return "1", []
    joined = ".".join(prefix)
    return "(prefix = ? OR (prefix >= ? AND prefix < ?))", [joined, joined + ".", joined + "/"]


def _record(row: tuple[Any, ...]) -> Record:
    return Record(
        tuple(row[0].split(".")), row[1], json.loads(row[2]), row[3], row[4], row[5], row[6]
    )


class _SqliteBackend(Backend):
    """Engine primitives over one connection; the store holds the lock."""

    __slots__ = ("conn", "in_write", "pending")

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.in_write = False
        self.pending: list[tuple[float, str, str]] = []

    def fetch(self, namespace: tuple[str, ...], key: str) -> Record | None:
        row = self.conn.execute(
            f"SELECT {_COLUMNS} FROM sg_store WHERE prefix = ? AND key = ?",
            (".".join(namespace), key),
        ).fetchone()
        return None if row is None else _record(row)

    def put(self, record: Record, vectors: list[tuple[str, Any]], now: float) -> None:
        prefix = ".".join(record.namespace)
        text = item_json(record, "SqliteStore")
        self.conn.execute(_UPSERT, upsert_params(prefix, record, text, now))
        self.conn.execute(
            "DELETE FROM sg_store_vectors WHERE prefix = ? AND key = ?", (prefix, record.key)
        )
        if vectors:
            self.conn.executemany(
                "INSERT INTO sg_store_vectors (prefix, key, seq, field, embedding) "
                "VALUES (?, ?, ?, ?, ?)",
                [
                    (prefix, record.key, seq, field, pack_vector(vec))
                    for seq, (field, vec) in enumerate(vectors)
                ],
            )

    def remove(self, namespace: tuple[str, ...], key: str) -> None:
        params = (".".join(namespace), key)
        self.conn.execute("DELETE FROM sg_store WHERE prefix = ? AND key = ?", params)
        self.conn.execute("DELETE FROM sg_store_vectors WHERE prefix = ? AND key = ?", params)

    def scan(self, query: Scan) -> Iterator[Record]:
        prefix, now, filter, predicate, limit, offset = query
        clause, params = _prefix_clause(prefix)
        sql = f"SELECT {_COLUMNS} FROM sg_store WHERE {clause} AND {_LIVE}"
        params.append(now)
        narrow, narrow_params = sql_prefilter(filter)
        if narrow:
            sql += f" AND {narrow}"
            params += narrow_params
        sql += " ORDER BY updated_at DESC"
        if limit is not None:
            sql += " LIMIT ? OFFSET ?"
            params += [limit, offset]
        cursor = self.conn.execute(sql, params)
        loads = json.loads
        try:
            for row in cursor:
                value = loads(row[2])
                if predicate is None or predicate(value):
                    yield Record(
                        tuple(row[0].split(".")), row[1], value, row[3], row[4], row[5], row[6]
                    )
        finally:
            cursor.close()

    def vectors(self, prefix: tuple[str, ...], keys: set[Key]) -> dict[Key, list[Any]]:
        if not keys:
            return {}
        clause, params = _prefix_clause(prefix)
        found: dict[Key, list[Any]] = {}
        for ns, key, blob in self.conn.execute(
            f"SELECT prefix, key, embedding FROM sg_store_vectors WHERE {clause} "
            f"ORDER BY prefix, key, seq",
            params,
        ):
            ident = (tuple(ns.split(".")), key)
            if ident in keys:
                found.setdefault(ident, []).append(unpack_vector(blob))
        return found

    def namespaces(self, now: float) -> Iterable[tuple[str, ...]]:
        rows = self.conn.execute(f"SELECT DISTINCT prefix FROM sg_store WHERE {_LIVE}", (now,))
        return [tuple(row[0].split(".")) for row in rows]

    def refresh(self, record: Record, now: float) -> None:
        entry = (now, ".".join(record.namespace), record.key)
        if self.in_write:
            self.apply_refreshes([entry])
        else:
            self.pending.append(entry)

    def apply_refreshes(self, entries: list[tuple[float, str, str]]) -> None:
        # Uses the row's current ttl_minutes, so a concurrent update is never undone.
        self.conn.executemany(
            "UPDATE sg_store SET expires_at = ? + ttl_minutes * 60.0 "
            "WHERE prefix = ? AND key = ? AND ttl_minutes IS NOT NULL",
            entries,
        )


class SqliteStore(LocalStore):
    """A store in a SQLite database.

    Args:
        conn: an open ``sqlite3.Connection`` (used as is, not closed by the store), or
            a path / ``":memory:"`` to open (owned and closed by :meth:`close`).
        index: optional semantic search config (see
            :class:`~stategraph.store.base.IndexConfig`).
        ttl: optional :class:`~stategraph.store.base.TTLConfig` (minutes).
        busy_timeout_ms: how long a write waits for another process's lock.
    """

    def __init__(
        self,
        conn: sqlite3.Connection | str | os.PathLike[str],
        *,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        busy_timeout_ms: int = 5000,
    ) -> None:
        self._owns_conn = not isinstance(conn, sqlite3.Connection)
        if isinstance(conn, sqlite3.Connection):
            self.conn = conn
        else:
            self.conn = sqlite3.connect(
                os.fspath(conn), check_same_thread=False, isolation_level=None
            )
        self.conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        if self._owns_conn:
            self.conn.execute("PRAGMA journal_mode = WAL")
            self.conn.execute("PRAGMA synchronous = NORMAL")
        self._lock = threading.RLock()
        self._backend = _SqliteBackend(self.conn)
        self.is_setup = False
        try:
            super().__init__(index=index, ttl=ttl)
        except BaseException:
            if self._owns_conn:
                self.conn.close()
            raise

    @classmethod
    @contextmanager
    def from_conn_string(
        cls,
        conn_string: str,
        *,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
    ) -> Iterator[SqliteStore]:
        """Open a store on the database at ``conn_string`` and close it on exit."""
        store = cls(conn_string, index=index, ttl=ttl)
        try:
            yield store
        finally:
            store.close()

    def close(self) -> None:
        """Stop the TTL sweeper and close the connection if the store opened it."""
        self.stop_ttl_sweeper()
        if self._owns_conn:
            with self._lock:
                self.conn.close()

    @contextmanager
    def _transaction(self, write: bool) -> Iterator[None]:
        conn = self.conn
        if conn.in_transaction:  # join the caller's transaction
            conn.execute("SAVEPOINT sg_store")
            try:
                yield
            except BaseException:
                conn.execute("ROLLBACK TO sg_store")
                conn.execute("RELEASE sg_store")
                raise
            conn.execute("RELEASE sg_store")
            return
        conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
        try:
            yield
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def setup(self) -> None:
        """Create or migrate the tables (idempotent; called automatically)."""
        with self._lock:
            if self.is_setup:
                return
            with self._transaction(write=True):
                self.conn.execute(
                    "CREATE TABLE IF NOT EXISTS sg_store_migrations "
                    "(v INTEGER PRIMARY KEY, applied_at REAL NOT NULL)"
                )
                row = self.conn.execute("SELECT MAX(v) FROM sg_store_migrations").fetchone()
                version = row[0] or 0
                schema = "The store schema in this database"
                for v in pending_migrations(schema, version, MIGRATIONS):
                    for statement in MIGRATIONS[v]:
                        self.conn.execute(statement)
                    self.conn.execute(
                        "INSERT INTO sg_store_migrations (v, applied_at) VALUES (?, ?)",
                        (v + 1, self._now()),
                    )
            self.is_setup = True

    def _execute(self, plan: Plan, vectors: Vectors) -> list[Result]:
        with self._lock:
            if not self.is_setup:
                self.setup()
            backend = self._backend
            backend.in_write = plan.has_writes
            backend.pending = []
            now = self._now()
            with self._transaction(write=plan.has_writes):
                results = execute(backend, plan, vectors, now, self._stamp)
            if backend.pending:
                pending, backend.pending = backend.pending, []
                with self._transaction(write=True):
                    backend.apply_refreshes(pending)
            return results

    async def _aexecute(self, plan: Plan, vectors: Vectors) -> list[Result]:
        import asyncio

        return await asyncio.to_thread(self._execute, plan, vectors)

    def sweep_ttl(self) -> int:
        """Delete expired items now; return how many were deleted."""
        with self._lock:
            if not self.is_setup:
                self.setup()
            now = self._now()
            with self._transaction(write=True):
                self.conn.execute(
                    "DELETE FROM sg_store_vectors WHERE (prefix, key) IN (SELECT prefix, key "
                    "FROM sg_store WHERE expires_at IS NOT NULL AND expires_at <= ?)",
                    (now,),
                )
                cursor = self.conn.execute(
                    "DELETE FROM sg_store WHERE expires_at IS NOT NULL AND expires_at <= ?",
                    (now,),
                )
                return cursor.rowcount

    async def asweep_ttl(self) -> int:
        """Async twin of :meth:`sweep_ttl` (runs on a worker thread)."""
        import asyncio

        return await asyncio.to_thread(self.sweep_ttl)
