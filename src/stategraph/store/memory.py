"""An in-process store: dicts guarded by a lock, with optional semantic search and TTL.

Good for tests and single-process applications; nothing survives the process.

Example::

    store = InMemoryStore(index={"dims": 3, "embed": my_embed, "fields": ["text"]})
    store.put(("users", "alice"), "m1", {"text": "likes tea"})
    store.search(("users",), query="drinks")
"""

from __future__ import annotations

import heapq
import itertools
import threading
from collections.abc import Iterable, Iterator
from typing import Any

from stategraph.store._engine import Backend, Key, LocalStore, Plan, Record, Scan, Vectors, execute
from stategraph.store.base import IndexConfig, Result, TTLConfig

__all__ = ["InMemoryStore"]


def _newest_first(record: Record) -> float:
    return -record.updated_at


class _MemoryBackend(Backend):
    """Namespace -> key -> record dicts, plus vectors by item."""

    __slots__ = ("data", "vecs")

    def __init__(self) -> None:
        self.data: dict[tuple[str, ...], dict[str, Record]] = {}
        self.vecs: dict[Key, list[Any]] = {}

    def fetch(self, namespace: tuple[str, ...], key: str) -> Record | None:
        items = self.data.get(namespace)
        return None if items is None else items.get(key)

    def put(self, record: Record, vectors: list[tuple[str, Any]], now: float) -> None:
        items = self.data.setdefault(record.namespace, {})
        # Re-inserting moves the key to the end: each namespace's dict stays ordered
        # by updated_at (write stamps are strictly increasing), so scans need no sort.
        old = items.pop(record.key, None)
        if old is not None and not old.expired(now):
            record.created_at = old.created_at
        items[record.key] = record
        ident = (record.namespace, record.key)
        if vectors:
            self.vecs[ident] = [vec for _, vec in vectors]
        else:
            self.vecs.pop(ident, None)

    def remove(self, namespace: tuple[str, ...], key: str) -> None:
        items = self.data.get(namespace)
        if items is None or key not in items:
            return
        del items[key]
        if not items:
            del self.data[namespace]
        self.vecs.pop((namespace, key), None)

    def scan(self, query: Scan) -> Iterator[Record]:
        prefix, now, _, predicate, limit, offset = query
        n = len(prefix)
        newest_first = [
            reversed(items.values()) for ns, items in self.data.items() if ns[:n] == prefix
        ]
        if len(newest_first) == 1:
            merged: Iterable[Record] = newest_first[0]
        else:
            merged = heapq.merge(*newest_first, key=_newest_first)
        live = (rec for rec in merged if rec.expires_at is None or rec.expires_at > now)
        if predicate is not None:
            return (rec for rec in live if predicate(rec.value))
        if limit is not None:
            return itertools.islice(live, offset, offset + limit)
        return live

    def vectors(self, prefix: tuple[str, ...], keys: set[Key]) -> dict[Key, list[Any]]:
        return {k: self.vecs[k] for k in keys if k in self.vecs}

    def namespaces(self, now: float) -> Iterable[tuple[str, ...]]:
        return [
            ns
            for ns, items in self.data.items()
            if any(not rec.expired(now) for rec in items.values())
        ]

    def refresh(self, record: Record, now: float) -> None:
        if record.ttl_minutes is not None:
            record.expires_at = now + record.ttl_minutes * 60.0

    def sweep(self, now: float) -> int:
        expired = [
            (ns, key)
            for ns, items in self.data.items()
            for key, rec in items.items()
            if rec.expired(now)
        ]
        for ns, key in expired:
            self.remove(ns, key)
        return len(expired)


class InMemoryStore(LocalStore):
    """A thread-safe in-memory store.

    Args:
        index: optional semantic search config ``{"dims", "embed", "fields"}``; see
            :class:`~stategraph.store.base.IndexConfig`.
        ttl: optional :class:`~stategraph.store.base.TTLConfig` (minutes).

    Values are kept as given (a shallow copy of the dict), so they need not be JSON.
    """

    def __init__(self, *, index: IndexConfig | None = None, ttl: TTLConfig | None = None) -> None:
        self._lock = threading.RLock()
        self._backend = _MemoryBackend()
        super().__init__(index=index, ttl=ttl)

    def _execute(self, plan: Plan, vectors: Vectors) -> list[Result]:
        with self._lock:
            return execute(self._backend, plan, vectors, self._now(), self._stamp)

    def sweep_ttl(self) -> int:
        """Delete expired items now; return how many were deleted."""
        with self._lock:
            return self._backend.sweep(self._now())
