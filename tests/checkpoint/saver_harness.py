"""The checkpoint test harness: every saver behind one calling interface.

``api`` is parametrized over the savers (in-memory, SQLite file, SQLite ``:memory:``,
async SQLite, PostgreSQL, async PostgreSQL) and over the calling mode: ``sync`` calls
the sync methods, ``async`` awaits the ``a`` methods. Tests are written once as
``async def`` against ``Api``. The sync methods of the async savers refuse to run
inside an event loop, so in ``sync`` mode they are called from a worker thread, as a
sync program would.

PostgreSQL savers get a fresh schema per test (``sg_test_<hex>``, dropped afterwards)
on ``STATEGRAPH_TEST_PG`` (default ``postgresql://postgres@127.0.0.1:5432/test``). When
the server is unreachable the PostgreSQL tests are skipped, except under ``CI`` where
they fail.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import sqlite3
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from stategraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from stategraph.checkpoint.memory import InMemorySaver
from stategraph.checkpoint.postgres import PostgresSaver
from stategraph.checkpoint.postgres.aio import AsyncPostgresSaver
from stategraph.checkpoint.sqlite import SqliteSaver
from stategraph.checkpoint.sqlite.aio import AsyncSqliteSaver

SAVER_KINDS = [
    "memory",
    "sqlite_file",
    "sqlite_memory",
    "async_sqlite",
    "postgres",
    "async_postgres",
]
PG_URL = os.environ.get("STATEGRAPH_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
PG_TABLES = {
    "checkpoints": "sg_checkpoints",
    "blobs": "sg_checkpoint_blobs",
    "writes": "sg_checkpoint_writes",
}
_pg_error: list[str] = []  # the reason PostgreSQL is unreachable, once known
_pg_checked: list[bool] = []


def require_postgres() -> None:
    """Skip the calling test when PostgreSQL is unreachable (fail instead under CI)."""
    if not _pg_checked:
        try:
            psycopg.connect(PG_URL, connect_timeout=5).close()
        except psycopg.OperationalError as exc:
            _pg_error.append(f"PostgreSQL at {PG_URL} is unreachable: {exc}")
        _pg_checked.append(True)
    if _pg_error:
        if os.environ.get("CI"):
            pytest.fail(_pg_error[0] + " (CI must start it before the tests)")
        pytest.skip(_pg_error[0])


class PgSchema:
    """A fresh schema on the test database; ``conninfo`` puts it first on the
    ``search_path``, :meth:`drop` removes it with everything in it."""

    def __init__(self) -> None:
        require_postgres()
        self.name = f"sg_test_{uuid.uuid4().hex}"
        with psycopg.connect(PG_URL, autocommit=True) as admin:
            admin.execute(f"CREATE SCHEMA {self.name}")
        self.conninfo = psycopg.conninfo.make_conninfo(
            PG_URL, options=f"-c search_path={self.name}"
        )

    def connect(self, **kwargs: Any) -> psycopg.Connection[Any]:
        """A sync connection (autocommit by default) using this schema."""
        kwargs.setdefault("autocommit", True)
        return psycopg.connect(self.conninfo, **kwargs)

    async def aconnect(self, **kwargs: Any) -> psycopg.AsyncConnection[Any]:
        """An async connection (autocommit by default) using this schema."""
        kwargs.setdefault("autocommit", True)
        return await psycopg.AsyncConnection.connect(self.conninfo, **kwargs)

    def drop(self) -> None:
        """Drop the schema and everything in it."""
        with psycopg.connect(PG_URL, autocommit=True) as admin:
            admin.execute(f"DROP SCHEMA IF EXISTS {self.name} CASCADE")


class Api:
    """Calls one saver through its sync or its async methods."""

    def __init__(
        self,
        saver: BaseCheckpointSaver[Any],
        kind: str,
        mode: str,
        *,
        pg: PgSchema | None = None,
    ) -> None:
        self.saver = saver
        self.kind = kind
        self.mode = mode
        self.pg = pg

    def __repr__(self) -> str:
        return f"Api({self.kind}, {self.mode})"

    async def _sync(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if isinstance(self.saver, AsyncSqliteSaver | AsyncPostgresSaver):
            return await asyncio.to_thread(fn, *args, **kwargs)
        return fn(*args, **kwargs)

    async def put(
        self,
        config: dict[str, Any],
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> dict[str, Any]:
        if self.mode == "async":
            return await self.saver.aput(config, checkpoint, metadata, new_versions)
        return await self._sync(self.saver.put, config, checkpoint, metadata, new_versions)

    async def put_writes(
        self, config: dict[str, Any], writes: list[tuple[str, Any]], task_id: str, path: str = ""
    ) -> None:
        if self.mode == "async":
            await self.saver.aput_writes(config, writes, task_id, path)
        else:
            await self._sync(self.saver.put_writes, config, writes, task_id, path)

    async def get_tuple(self, config: dict[str, Any]) -> CheckpointTuple | None:
        if self.mode == "async":
            return await self.saver.aget_tuple(config)
        return await self._sync(self.saver.get_tuple, config)

    async def get(self, config: dict[str, Any]) -> Checkpoint | None:
        if self.mode == "async":
            return await self.saver.aget(config)
        return await self._sync(self.saver.get, config)

    async def list(self, config: dict[str, Any] | None, **kwargs: Any) -> list[CheckpointTuple]:
        if self.mode == "async":
            return [item async for item in self.saver.alist(config, **kwargs)]
        return await self._sync(lambda: list(self.saver.list(config, **kwargs)))

    async def delete_thread(self, thread_id: str) -> None:
        if self.mode == "async":
            await self.saver.adelete_thread(thread_id)
        else:
            await self._sync(self.saver.delete_thread, thread_id)

    # -- storage inspection ----------------------------------------------------

    @property
    def conn(self) -> sqlite3.Connection | None:
        saver = self.saver
        if isinstance(saver, SqliteSaver | AsyncSqliteSaver):
            return saver.conn
        return None

    def count(self, table: str) -> int:
        """Rows of ``table`` (SQLite, PostgreSQL) or entries of the matching dict (memory)."""
        saver = self.saver
        if self.pg is not None:
            with self.pg.connect() as pg_conn:
                row = pg_conn.execute(f"SELECT COUNT(*) FROM {PG_TABLES[table]}").fetchone()
                assert row is not None
                return int(row[0])
        if isinstance(saver, InMemorySaver):
            if table == "blobs":
                return len(saver.blobs)
            if table == "writes":
                return sum(len(bucket) for bucket in saver.writes.values())
            return sum(len(ids) for by_ns in saver.storage.values() for ids in by_ns.values())
        conn = self.conn
        assert conn is not None
        lock = saver.core.lock if isinstance(saver, AsyncSqliteSaver) else saver.lock  # type: ignore[attr-defined]
        with lock:
            return int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


def make_saver(kind: str, tmp_path: Path) -> tuple[BaseCheckpointSaver[Any], Callable[[], None]]:
    """Return a new saver of ``kind`` and a function that releases it."""
    if kind == "memory":
        return InMemorySaver(), lambda: None
    if kind == "sqlite_file":
        conn = sqlite3.connect(
            str(tmp_path / "cp.sqlite"), check_same_thread=False, isolation_level=None
        )
        return SqliteSaver(conn), conn.close
    if kind == "sqlite_memory":
        conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        return SqliteSaver(conn), conn.close
    if kind == "async_sqlite":
        conn = sqlite3.connect(
            str(tmp_path / "acp.sqlite"), check_same_thread=False, isolation_level=None
        )
        saver = AsyncSqliteSaver(conn)
        return saver, saver._close
    if kind == "postgres":
        pg_saver, pg_close, _ = _make_postgres()
        return pg_saver, pg_close
    raise ValueError(kind)


def _make_postgres() -> tuple[PostgresSaver, Callable[[], None], PgSchema]:
    schema = PgSchema()
    conn = schema.connect()

    def close() -> None:
        conn.close()
        schema.drop()

    return PostgresSaver(conn), close, schema


async def open_saver(
    kind: str, tmp_path: Path
) -> tuple[BaseCheckpointSaver[Any], Callable[[], Awaitable[None]], PgSchema | None]:
    """Like :func:`make_saver` for every kind (the async PostgreSQL saver needs the
    running loop); returns ``(saver, async close, its schema or None)``."""
    schema: PgSchema | None = None
    saver: BaseCheckpointSaver[Any]
    if kind == "async_postgres":
        schema = PgSchema()
        aconn = await schema.aconnect()
        saver = AsyncPostgresSaver(aconn)

        def close() -> None:
            assert schema is not None
            schema.drop()

        async def aclose() -> None:
            await aconn.close()
            close()

        return saver, aclose, schema
    if kind == "postgres":
        saver, close, schema = _make_postgres()
    else:
        saver, close = make_saver(kind, tmp_path)

    async def close_sync() -> None:
        close()

    return saver, close_sync, schema


_FIDELITY = Path(__file__).resolve().parent.parent / "serde" / "fidelity_cases.py"


def _fidelity_module() -> Any:
    """Import ``tests/serde/fidelity_cases.py`` by path (test dirs are not packages)."""
    spec = importlib.util.spec_from_file_location("_serde_fidelity_cases", _FIDELITY)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_fidelity_cases() -> tuple[list[tuple[str, Any, tuple[type, ...]]], Callable[..., None]]:
    """Return the serde helper's ``fidelity_cases()`` and its deep ``assert_same``."""
    module = _fidelity_module()
    cases = [(name, value, tuple(types)) for name, value, types in module.fidelity_cases()]
    return cases, module.assert_same
