"""The graph's store on a worker: reopened from where it lives, or a clear refusal.

A store object holds an open connection in the caller's process; it cannot travel.
:func:`store_handle` turns it into a small picklable handle: for a SQLite store on a
file, the path (and its index/TTL settings), which the worker opens once per process;
for a store that lives in the caller's memory (``InMemoryStore``, SQLite
``:memory:``), a handle whose store raises :class:`StoreUnreachableError` on any use.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from typing import Any

from stategraph.store.base import BaseStore, Op, Result

__all__ = ["StoreHandle", "StoreUnreachableError", "UnreachableStore", "store_handle"]

_OPEN: dict[tuple[Any, ...], BaseStore] = {}
_OPEN_LOCK = threading.Lock()


class StoreUnreachableError(RuntimeError):
    """A task running on a worker used a store that exists only in the caller's process."""


class UnreachableStore(BaseStore):
    """Stands in for a store the worker cannot reach: every operation raises."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Raise :class:`StoreUnreachableError` with the reason."""
        raise StoreUnreachableError(self.reason)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Raise :class:`StoreUnreachableError` with the reason."""
        raise StoreUnreachableError(self.reason)


class StoreHandle:
    """A picklable description of the graph's store; :meth:`open` gives a usable store."""

    __slots__ = ("index", "kind", "path", "reason", "ttl")

    def __init__(
        self,
        kind: str,
        path: str = "",
        index: Any = None,
        ttl: Any = None,
        reason: str = "",
    ) -> None:
        self.kind = kind
        self.path = path
        self.index = index
        self.ttl = ttl
        self.reason = reason

    def __getstate__(self) -> tuple[Any, ...]:
        return (self.kind, self.path, self.index, self.ttl, self.reason)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self.kind, self.path, self.index, self.ttl, self.reason = state

    def open(self) -> BaseStore:
        """The store in this process (opened once per process and path, then reused)."""
        if self.kind == "unreachable":
            return UnreachableStore(self.reason)
        key = (self.kind, self.path, os.getpid())
        with _OPEN_LOCK:
            store = _OPEN.get(key)
            if store is None:
                store = _OPEN[key] = self._open()
        return store

    def _open(self) -> BaseStore:
        if self.kind == "sqlite-async":
            from stategraph.store.sqlite.aio import AsyncSqliteStore

            return AsyncSqliteStore(self.path, index=self.index, ttl=self.ttl)
        from stategraph.store.sqlite import SqliteStore

        return SqliteStore(self.path, index=self.index, ttl=self.ttl)


def _sqlite_file(conn: Any) -> str:
    """The file of the main database of a sqlite3 connection ('' for ``:memory:``)."""
    for _seq, name, path in conn.execute("PRAGMA database_list").fetchall():
        if name == "main":
            return str(path or "")
    return ""


def store_handle(store: BaseStore | None, where: str) -> StoreHandle | None:
    """The handle a worker (described by ``where``, e.g. ``"a Ray worker"``) opens ``store`` from."""
    if store is None:
        return None
    from stategraph.store.sqlite import SqliteStore
    from stategraph.store.sqlite.aio import AsyncSqliteStore

    kind = ""
    conn = None
    if isinstance(store, AsyncSqliteStore):
        kind, conn = "sqlite-async", store.conn
    elif isinstance(store, SqliteStore):
        kind, conn = "sqlite", store.conn
    if conn is not None:
        path = _sqlite_file(conn)
        if path:
            ttl = getattr(store, "ttl_config", None)
            ttl = {k: v for k, v in ttl.items() if k != "sweep_interval_minutes"} if ttl else None
            return StoreHandle(kind, path, getattr(store, "index_config", None), ttl or None)
        what = f"{type(store).__name__} on ':memory:'"
    else:
        what = type(store).__name__
    return StoreHandle(
        "unreachable",
        reason=(
            f"This task runs on {where}, but the graph's store is a {what}, which lives in "
            f"the memory of the process that started the run (pid {os.getpid()}), so the "
            "worker cannot reach it. Give the graph a store the worker can reopen (a "
            "SqliteStore on a file every worker can open), or run the graph without a "
            "remote executor."
        ),
    )
