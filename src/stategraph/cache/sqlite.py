"""A durable node cache on stdlib :mod:`sqlite3` (one table, WAL mode)."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from stategraph.cache.base import BaseCache, Clock, FullKey, Namespace, ValueT

if TYPE_CHECKING:
    from typing_extensions import Self

    from stategraph.checkpoint.serde.base import SerializerProtocol

__all__ = ["SqliteCache"]

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS cache (
        ns TEXT NOT NULL,
        key TEXT NOT NULL,
        type TEXT NOT NULL,
        value BLOB NOT NULL,
        expiry REAL,
        PRIMARY KEY (ns, key)
    )""",
    "CREATE INDEX IF NOT EXISTS cache_expiry ON cache (expiry) WHERE expiry IS NOT NULL",
)

_CHUNK = 400
"""Keys per ``SELECT``: two bound parameters each, well under SQLite's limit of 999."""


def _encode_ns(ns: Namespace) -> str:
    """Encode a namespace unambiguously (``()`` and ``("",)`` stay distinct)."""
    return json.dumps(list(ns), ensure_ascii=False, separators=(",", ":"))


class SqliteCache(BaseCache[ValueT]):
    """Stores serialized cache entries in one SQLite table keyed by ``(ns, key)``.

    Use ``":memory:"`` (the default) for a private in-process cache, or a file path to
    share the cache between processes and keep it across restarts. Expired entries are
    never returned; a read deletes those it meets and every write sweeps the expired
    ones (an index on the expiry column keeps that cheap). One connection is shared
    by all threads behind a lock; the async methods run on a worker thread.

    Args:
        path: database file, or ``":memory:"``.
        serde: serializer for stored values; defaults to ``JsonPlusSerializer``.
        clock: time source for expiry, in seconds; defaults to :func:`time.time`.
        busy_timeout: milliseconds to wait for another process's write lock.
    """

    def __init__(
        self,
        *,
        path: str = ":memory:",
        serde: SerializerProtocol | None = None,
        clock: Clock | None = None,
        busy_timeout: int = 5000,
    ) -> None:
        super().__init__(serde=serde, clock=clock)
        self.path = path
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout)}")
        self._conn.execute("PRAGMA journal_mode = WAL")
        self._conn.execute("PRAGMA synchronous = NORMAL")
        with self._transaction():
            for statement in _SCHEMA:
                self._conn.execute(statement)

    def _transaction(self) -> _Transaction:
        return _Transaction(self._conn)

    def get(self, keys: Sequence[FullKey]) -> dict[FullKey, ValueT]:
        """Return the cached value of each key in ``keys``; missing or expired keys are absent."""
        wanted: dict[tuple[str, str], FullKey] = {}
        for full_key in keys:
            ns, key = full_key
            wanted[(_encode_ns(ns), key)] = full_key
        if not wanted:
            return {}
        now = self.clock()
        rows: list[tuple[str, str, str, bytes, float | None]] = []
        expired: list[tuple[str, str]] = []
        with self._lock:
            for chunk in _chunks(list(wanted), _CHUNK):
                placeholders = ",".join("(?,?)" for _ in chunk)
                params = [part for pair in chunk for part in pair]
                rows.extend(
                    self._conn.execute(
                        "SELECT ns, key, type, value, expiry FROM cache "
                        f"WHERE (ns, key) IN (VALUES {placeholders})",
                        params,
                    )
                )
            live = []
            for row in rows:
                if row[4] is not None and row[4] <= now:
                    expired.append((row[0], row[1]))
                else:
                    live.append(row)
            if expired:
                with self._transaction():
                    self._conn.executemany(
                        "DELETE FROM cache WHERE ns = ? AND key = ? AND expiry <= ?",
                        [(ns, key, now) for ns, key in expired],
                    )
        return {wanted[(ns, key)]: self._load(tag, bytes(value)) for ns, key, tag, value, _ in live}

    def set(self, pairs: Mapping[FullKey, tuple[ValueT, int | None]]) -> None:
        """Store ``{full_key: (value, ttl_seconds)}``; a ``None`` TTL never expires.

        A TTL of zero or less stores nothing and drops any previous entry of that key.
        """
        now = self.clock()
        upserts: list[tuple[str, str, str, bytes, float | None]] = []
        deletes: list[tuple[str, str]] = []
        for (ns, key), (value, ttl) in pairs.items():
            expiry = self._expiry(ttl, now)
            if expiry is not None and expiry <= now:
                deletes.append((_encode_ns(ns), key))
            else:
                tag, payload = self._dump(value)
                upserts.append((_encode_ns(ns), key, tag, payload, expiry))
        with self._lock, self._transaction():
            if deletes:
                self._conn.executemany("DELETE FROM cache WHERE ns = ? AND key = ?", deletes)
            if upserts:
                self._conn.executemany(
                    "INSERT OR REPLACE INTO cache (ns, key, type, value, expiry) "
                    "VALUES (?, ?, ?, ?, ?)",
                    upserts,
                )
            self._conn.execute("DELETE FROM cache WHERE expiry IS NOT NULL AND expiry <= ?", (now,))

    def clear(self, namespaces: Sequence[Namespace] | None = None) -> None:
        """Delete the entries of exactly these namespaces, or everything if ``None``."""
        with self._lock, self._transaction():
            if namespaces is None:
                self._conn.execute("DELETE FROM cache")
            else:
                self._conn.executemany(
                    "DELETE FROM cache WHERE ns = ?", [(_encode_ns(ns),) for ns in namespaces]
                )

    def close(self) -> None:
        """Close the database connection; the cache cannot be used afterwards."""
        with self._lock:
            self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class _Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on error) on an autocommit connection."""

    __slots__ = ("conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self.conn.execute("COMMIT" if exc_type is None else "ROLLBACK")


def _chunks(items: list[tuple[str, str]], size: int) -> Iterator[list[tuple[str, str]]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
