"""Helpers shared by the store tests: store factory, toy embedding, clock, API adapter."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from stategraph.store.base import BaseStore
from stategraph.store.memory import InMemoryStore
from stategraph.store.sqlite import SqliteStore
from stategraph.store.sqlite.aio import AsyncSqliteStore

SYNC_KINDS = ["memory", "sqlite_file", "sqlite_memory"]
ALL_KINDS = [*SYNC_KINDS, "async_sqlite"]
CASES = [(kind, "sync") for kind in SYNC_KINDS] + [(kind, "async") for kind in ALL_KINDS]


def letters(texts: Sequence[str]) -> list[list[float]]:
    """Deterministic toy embedding: counts of the letters a-z (26 dims)."""
    out = []
    for text in texts:
        vec = [0.0] * 26
        for ch in text.lower():
            if "a" <= ch <= "z":
                vec[ord(ch) - 97] += 1.0
        out.append(vec)
    return out


def letters_index(fields: list[str] | None = None) -> dict[str, Any]:
    """An index config using :func:`letters`."""
    config: dict[str, Any] = {"dims": 26, "embed": letters}
    if fields is not None:
        config["fields"] = fields
    return config


def make_store(kind: str, tmp_path: Path, **kwargs: Any) -> BaseStore:
    """Build a store of ``kind`` (``memory``, ``sqlite_file``, ``sqlite_memory``, ``async_sqlite``)."""
    if kind == "memory":
        return InMemoryStore(**kwargs)
    if kind == "sqlite_file":
        return SqliteStore(tmp_path / "store.db", **kwargs)
    if kind == "sqlite_memory":
        return SqliteStore(":memory:", **kwargs)
    if kind == "async_sqlite":
        return AsyncSqliteStore(tmp_path / "astore.db", **kwargs)
    raise ValueError(kind)


def close_store(store: BaseStore) -> None:
    """Release a store's connection and threads."""
    close = getattr(store, "close", None)
    if close is not None:
        close()
    else:
        stop = getattr(store, "stop_ttl_sweeper", None)
        if stop is not None:
            stop()


class Clock:
    """Injectable clock in epoch seconds; ``advance`` moves it without sleeping."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self.t = start

    def __call__(self) -> float:
        return self.t

    def advance(self, *, minutes: float = 0.0, seconds: float = 0.0) -> None:
        self.t += minutes * 60.0 + seconds


class Api:
    """Calls the sync (``put``) or async (``aput``) method of a store."""

    def __init__(self, store: BaseStore, mode: str) -> None:
        self.store = store
        self.mode = mode

    def use_clock(self, clock: Clock) -> Clock:
        """Make the store read time from ``clock``."""
        self.store._now = clock  # type: ignore[attr-defined]
        return clock

    def __getattr__(self, name: str) -> Callable[..., Any]:
        async def call(*args: Any, **kwargs: Any) -> Any:
            if self.mode == "sync":
                return getattr(self.store, name)(*args, **kwargs)
            return await getattr(self.store, "a" + name)(*args, **kwargs)

        return call
