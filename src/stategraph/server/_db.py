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

__all__ = [
    "Op",
    "Db",
    "SqliteDb",
    "PostgresDb",
    "SqliteThread",
    "open_sqlite",
    "postgres_missing",
]


def open_sqlite(path: str) -> sqlite3.Connection:
    """An autocommit connection to the SQLite file ``path`` (its folder created), in
    WAL mode, waiting up to 30 s for a lock: the server's records and run queue."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=30.0, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA busy_timeout=30000")
    return conn


def postgres_missing(exc: ImportError) -> ImportError:
    """The error for ``--postgres`` without psycopg and psycopg-pool installed."""
    return ImportError(
        "--postgres needs psycopg and psycopg-pool: pip install 'stategraph[server,postgres]' "
        f"psycopg-pool ({exc})."
    )


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


def _drive(op: Op[T], execute: Any) -> T:
    try:
        sql, params = next(op)
        while True:
            sql, params = op.send(execute(sql, params))
    except StopIteration as stop:
        return stop.value


class SqliteThread:
    """A SQLite file used from one private thread (WAL, shared with other processes):
    the connection, opened on first use, and its transactions and closing."""

    def __init__(self, path: str | Path, thread_name: str) -> None:
        self.path = str(path)
        self._pool = ThreadPoolExecutor(1, thread_name_prefix=thread_name)
        self._conn: sqlite3.Connection | None = None

    def _connect(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = open_sqlite(self.path)
        return self._conn

    def _transaction(
        self, fn: Callable[[sqlite3.Connection], T], begin: str = "BEGIN IMMEDIATE"
    ) -> T:
        """``fn(connection)`` in one transaction, rolled back if it raises (call it on
        the private thread)."""
        conn = self._connect()
        conn.execute(begin)
        try:
            out = fn(conn)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return out

    async def _close_connection(self) -> None:
        loop = asyncio.get_running_loop()

        def close() -> None:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

        await loop.run_in_executor(self._pool, close)
        self._pool.shutdown(wait=False)


class SqliteDb(SqliteThread):
    """A SQLite file used from one private thread (WAL, shared with other processes)."""

    dialect = "sqlite"

    def __init__(self, path: str | Path) -> None:
        super().__init__(path, "sg-records")

    def _run_sync(self, op: Op[T], write: bool) -> T:
        return self._transaction(
            lambda conn: _drive(op, lambda sql, params: conn.execute(sql, params).fetchall()),
            "BEGIN IMMEDIATE" if write else "BEGIN",
        )

    async def run(self, op: Op[T], *, write: bool = True) -> T:
        """Run ``op`` on the private thread, in one transaction."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, self._run_sync, op, write)

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
        try:
            from psycopg_pool import AsyncConnectionPool
        except ImportError as exc:
            raise postgres_missing(exc) from exc
        self.dsn = dsn
        self._pool = AsyncConnectionPool(
            dsn, min_size=min_size, max_size=max_size, open=False, kwargs={"autocommit": True}
        )
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
                    return await self._drive(cur, op)
            async with conn.cursor() as cur:
                return await self._drive(cur, op)

    @staticmethod
    async def _drive(cur: Any, op: Op[T]) -> T:
        try:
            sql, params = next(op)
            while True:
                await cur.execute(sql.replace("?", "%s"), params)
                rows = await cur.fetchall() if cur.description is not None else []
                sql, params = op.send(rows)
        except StopIteration as stop:
            return stop.value

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
