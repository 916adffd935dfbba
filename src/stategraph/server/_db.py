"""Two small database drivers for the server's own tables: SQLite and PostgreSQL.

Every database operation is written once, as a generator (sans-I/O) that yields
``(sql, params)`` statements with ``?`` placeholders and receives each statement's
rows (use ``RETURNING`` to learn what changed). A driver runs it in one transaction:

* :class:`SqliteDb` on a private thread (one connection; the whole operation is one
  hop off the event loop, ``BEGIN IMMEDIATE`` for writes);
* :class:`PostgresDb` on a psycopg async connection pool (``?`` becomes ``%s``).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Generator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol, TypeVar

__all__ = ["Op", "Db", "SqliteDb", "PostgresDb", "SqliteThread", "async_pool", "drive_cursor"]

T = TypeVar("T")
Statement = tuple[str, Sequence[Any]]
Rows = list[tuple[Any, ...]]
Op = Generator[Statement, Rows, T]


class Db(Protocol):
    """What the records and the event log need from a database."""

    dialect: str
    """``"sqlite"`` or ``"postgres"``."""

    async def run(self, op: Op[T], *, write: bool = True) -> T:
        """Run ``op`` in one transaction; return its value."""
        ...

    async def setup(self, ddl: Sequence[str]) -> None:
        """Run DDL statements (idempotent)."""
        ...

    async def aclose(self) -> None:
        """Close the connections."""
        ...


class SqliteThread:
    """One connection to a SQLite file of the server's own (its folder created on first
    use; autocommit, WAL, ``synchronous=NORMAL``, a 30 s busy timeout), used only from
    one private thread: the base of :class:`SqliteDb` and the SQLite run queue."""

    def __init__(self, path: str | Path, thread_name: str) -> None:
        self.path = str(path)
        self._pool = ThreadPoolExecutor(1, thread_name_prefix=thread_name)
        self._conn: sqlite3.Connection | None = None

    def _connect(self) -> sqlite3.Connection:
        """The connection (opened on first use; call it on the private thread)."""
        if self._conn is None:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA busy_timeout=30000")
            self._conn = conn
        return self._conn

    async def _on_thread(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` run on the private thread."""
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)

    async def _close_connection(self) -> None:
        """Close the connection on its thread, then stop the thread."""

        def close() -> None:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

        await self._on_thread(close)
        self._pool.shutdown(wait=False)


def async_pool(dsn: str, *, min_size: int, max_size: int) -> Any:
    """A psycopg async connection pool on ``dsn`` in autocommit, not yet open (an
    ``ImportError`` that names the extras when psycopg or psycopg-pool is missing)."""
    try:
        from psycopg_pool import AsyncConnectionPool
    except ImportError as exc:
        raise ImportError(
            "--postgres needs psycopg and psycopg-pool: pip install 'stategraph[server,postgres]' "
            f"psycopg-pool ({exc})."
        ) from exc
    return AsyncConnectionPool(
        dsn, min_size=min_size, max_size=max_size, open=False, kwargs={"autocommit": True}
    )


async def drive_cursor(cur: Any, op: Op[T]) -> T:
    """Run ``op`` on a psycopg async cursor (``?`` placeholders become ``%s``)."""
    try:
        sql, params = next(op)
        while True:
            await cur.execute(sql.replace("?", "%s"), params)
            rows = await cur.fetchall() if cur.description is not None else []
            sql, params = op.send(rows)
    except StopIteration as stop:
        return stop.value


def _drive(op: Op[T], execute: Any) -> T:
    try:
        sql, params = next(op)
        while True:
            sql, params = op.send(execute(sql, params))
    except StopIteration as stop:
        return stop.value


class SqliteDb(SqliteThread):
    """A SQLite file used from one private thread (WAL, shared with other processes)."""

    dialect = "sqlite"

    def __init__(self, path: str | Path) -> None:
        super().__init__(path, "sg-records")

    def _run_sync(self, op: Op[T], write: bool) -> T:
        conn = self._connect()
        conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
        try:
            out = _drive(op, lambda sql, params: conn.execute(sql, params).fetchall())
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return out

    async def run(self, op: Op[T], *, write: bool = True) -> T:
        """Run ``op`` on the private thread, in one transaction."""
        return await self._on_thread(self._run_sync, op, write)

    async def setup(self, ddl: Sequence[str]) -> None:
        """Create the tables."""

        def op() -> Op[None]:
            for stmt in ddl:
                yield stmt, ()

        await self.run(op())

    async def aclose(self) -> None:
        """Close the connection."""
        await self._close_connection()


class PostgresDb:
    """A psycopg async connection pool (the ``postgres`` extra)."""

    dialect = "postgres"

    def __init__(self, dsn: str, *, min_size: int = 1, max_size: int = 10) -> None:
        self.dsn = dsn
        self._pool = async_pool(dsn, min_size=min_size, max_size=max_size)
        self._opened = False

    async def _open(self) -> None:
        if not self._opened:
            await self._pool.open(wait=True)
            self._opened = True

    async def run(self, op: Op[T], *, write: bool = True) -> T:
        """Run ``op`` in one transaction on a pooled connection (a read runs its
        statements in autocommit: no BEGIN/COMMIT round trips)."""
        await self._open()
        async with self._pool.connection() as conn:
            if write:
                async with conn.transaction(), conn.cursor() as cur:
                    return await drive_cursor(cur, op)
            async with conn.cursor() as cur:
                return await drive_cursor(cur, op)

    async def setup(self, ddl: Sequence[str]) -> None:
        """Create the tables (serialized across processes by an advisory lock)."""

        def op() -> Op[None]:
            yield "SELECT pg_advisory_xact_lock(7324501)", ()
            for stmt in ddl:
                yield stmt, ()

        await self.run(op())

    async def listen(self, channel: str, callback: Any) -> Any:
        """Call ``callback(payload)`` for each ``NOTIFY`` on ``channel`` (a dedicated
        connection, reconnected after errors); returns the listening task."""
        import psycopg

        async def loop() -> None:
            while True:
                try:
                    async with await psycopg.AsyncConnection.connect(
                        self.dsn, autocommit=True
                    ) as conn:
                        await conn.execute(f"LISTEN {channel}")
                        async for note in conn.notifies():
                            callback(note.payload)
                except asyncio.CancelledError:
                    raise
                except Exception:
                    await asyncio.sleep(1.0)

        return asyncio.ensure_future(loop())

    async def aclose(self) -> None:
        """Close the pool."""
        if self._opened:
            await self._pool.close()
            self._opened = False
