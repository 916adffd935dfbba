"""Opening the storage of a deployment: embedded (SQLite files in a data directory) or
PostgreSQL (one database for checkpoints, store, records and the run queue)."""

from __future__ import annotations

import contextlib
import logging
import sqlite3
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stategraph.server._db import PostgresDb, SqliteDb, async_pool
from stategraph.server._queue import RunQueue
from stategraph.server._records import Records
from stategraph.server._sqlite_queue import SqliteRunQueue

__all__ = ["Storage", "open_storage"]

log = logging.getLogger("stategraph.server")


@dataclass
class Storage:
    """What a server or worker process stores things in."""

    saver: Any
    """An async checkpoint saver (``AsyncSqliteSaver`` / ``AsyncPostgresSaver``)."""
    store: Any
    """An async store (``AsyncSqliteStore`` / ``AsyncPostgresStore``)."""
    records: Records
    queue: RunQueue
    kind: str
    """``"sqlite"`` or ``"postgres"``."""
    where: str
    """The data directory or the (password-free) DSN, for messages."""
    joined: bool = False
    """The queue and the records share a database: the queue's ``enqueue_with``,
    ``claim_with`` and ``finish_with`` write both in one transaction."""


def _pg_queue(dsn: str) -> RunQueue | None:
    try:
        import importlib

        module = importlib.import_module("stategraph.server._pgqueue")
    except ImportError:
        return None
    factory = getattr(module, "PgRunQueue", None)
    if factory is None:
        return None
    queue: RunQueue = factory(dsn)
    return queue


def _redact(dsn: str) -> str:
    if "@" in dsn and "://" in dsn:
        scheme, rest = dsn.split("://", 1)
        creds, host = rest.rsplit("@", 1)
        return f"{scheme}://{creds.split(':')[0]}@{host}"
    return dsn


@contextlib.asynccontextmanager
async def open_storage(
    *,
    data_dir: str | Path | None = None,
    postgres: str | None = None,
    store_ttl: dict[str, Any] | None = None,
) -> AsyncIterator[Storage]:
    """Open (and create) the storage; close it on exit.

    Embedded: ``data_dir`` (created if missing) holds ``checkpoints.sqlite``,
    ``store.sqlite``, ``server.sqlite`` (records) and ``queue.sqlite``. PostgreSQL:
    everything in the database at ``postgres``; the run queue is the PostgreSQL queue
    (``server/_pgqueue``) when installed, else ``queue.sqlite`` in ``data_dir`` (then
    all processes must share that directory: one machine).
    """
    if postgres:
        async with _open_postgres(postgres, data_dir, store_ttl) as storage:
            yield storage
        return
    folder = Path(data_dir or ".stategraph")
    folder.mkdir(parents=True, exist_ok=True)
    from stategraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    from stategraph.store.sqlite.aio import AsyncSqliteStore

    conn = sqlite3.connect(
        str(folder / "checkpoints.sqlite"), check_same_thread=False, isolation_level=None
    )
    saver = AsyncSqliteSaver(conn)
    await saver.setup()
    store = AsyncSqliteStore(str(folder / "store.sqlite"), ttl=store_ttl)  # type: ignore[arg-type]
    await store.setup()
    records = Records(SqliteDb(folder / "server.sqlite"))
    await records.setup()
    queue = SqliteRunQueue(folder / "queue.sqlite")
    await queue.setup()
    try:
        yield Storage(saver, store, records, queue, "sqlite", str(folder.resolve()))
    finally:
        await queue.aclose()
        await records.aclose()
        await store.aclose()
        import asyncio

        await asyncio.get_running_loop().run_in_executor(None, saver._close)


@contextlib.asynccontextmanager
async def _open_postgres(
    dsn: str, data_dir: str | Path | None, store_ttl: dict[str, Any] | None
) -> AsyncIterator[Storage]:
    pool = async_pool(dsn, min_size=1, max_size=20)  # psycopg is there past this line
    from stategraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from stategraph.store.postgres.aio import AsyncPostgresStore

    await pool.open(wait=True)
    saver = AsyncPostgresSaver(pool)
    await saver.setup()
    store = AsyncPostgresStore(pool, ttl=store_ttl)  # type: ignore[arg-type]
    await store.setup()
    records = Records(PostgresDb(dsn))
    await records.setup()
    queue = _pg_queue(dsn)
    if queue is None:
        folder = Path(data_dir or ".stategraph")
        log.warning(
            "The PostgreSQL run queue is not installed: runs are queued in %s/queue.sqlite "
            "(every server and worker process must share that folder).",
            folder,
        )
        queue = SqliteRunQueue(folder / "queue.sqlite")
    await queue.setup()
    try:
        joined = hasattr(queue, "finish_with")
        yield Storage(saver, store, records, queue, "postgres", _redact(dsn), joined)
    finally:
        await queue.aclose()
        await records.aclose()
        with contextlib.suppress(Exception):
            await store.stop_ttl_sweeper()
        await pool.close()
