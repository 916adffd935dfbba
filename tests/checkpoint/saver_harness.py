"""The checkpoint test harness: every saver behind one calling interface.

``api`` is parametrized over the savers (in-memory, SQLite file, SQLite ``:memory:``,
async SQLite) and over the calling mode: ``sync`` calls the sync methods, ``async``
awaits the ``a`` methods. Tests are written once as ``async def`` against ``Api``.
The sync methods of ``AsyncSqliteSaver`` refuse to run inside an event loop, so in
``sync`` mode they are called from a worker thread, as a sync program would.
"""

from __future__ import annotations

import asyncio
import importlib.util
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from stategraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from stategraph.checkpoint.memory import InMemorySaver
from stategraph.checkpoint.sqlite import SqliteSaver
from stategraph.checkpoint.sqlite.aio import AsyncSqliteSaver

SAVER_KINDS = ["memory", "sqlite_file", "sqlite_memory", "async_sqlite"]


class Api:
    """Calls one saver through its sync or its async methods."""

    def __init__(self, saver: BaseCheckpointSaver[Any], kind: str, mode: str) -> None:
        self.saver = saver
        self.kind = kind
        self.mode = mode

    def __repr__(self) -> str:
        return f"Api({self.kind}, {self.mode})"

    async def _sync(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if isinstance(self.saver, AsyncSqliteSaver):
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
        """Rows of ``table`` (SQLite) or entries of the matching dict (memory)."""
        saver = self.saver
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
    raise ValueError(kind)


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
