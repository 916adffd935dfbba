"""A thread-safe in-process node cache."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from stategraph.cache.base import BaseCache, Clock, FullKey, Namespace, ValueT

if TYPE_CHECKING:
    from stategraph.checkpoint.serde.base import SerializerProtocol

__all__ = ["InMemoryCache"]

_Entry = tuple[str, bytes, float | None]


class InMemoryCache(BaseCache[ValueT]):
    """Keeps serialized cache entries in a dict, guarded by a lock.

    Entries live as long as the object. Expired entries are never returned and are
    deleted when a read meets them.

    Args:
        serde: serializer for stored values; defaults to ``JsonPlusSerializer``.
        clock: time source for expiry, in seconds; defaults to :func:`time.time`.
    """

    def __init__(self, *, serde: SerializerProtocol | None = None, clock: Clock | None = None):
        super().__init__(serde=serde, clock=clock)
        self._data: dict[Namespace, dict[str, _Entry]] = {}
        self._lock = threading.Lock()

    def get(self, keys: Sequence[FullKey]) -> dict[FullKey, ValueT]:
        """Return the cached value of each key in ``keys``; missing or expired keys are absent."""
        now = self.clock()
        found: list[tuple[FullKey, str, bytes]] = []
        with self._lock:
            for full_key in keys:
                ns, key = full_key
                entries = self._data.get(tuple(ns))
                if entries is None:
                    continue
                entry = entries.get(key)
                if entry is None:
                    continue
                tag, payload, expiry = entry
                if expiry is not None and expiry <= now:
                    del entries[key]
                    if not entries:
                        del self._data[tuple(ns)]
                    continue
                found.append((full_key, tag, payload))
        # Deserialize outside the lock: loading may be slow and must not block writers.
        return {full_key: self._load(tag, payload) for full_key, tag, payload in found}

    def set(self, pairs: Mapping[FullKey, tuple[ValueT, int | None]]) -> None:
        """Store ``{full_key: (value, ttl_seconds)}``; a ``None`` TTL never expires.

        A TTL of zero or less stores nothing and drops any previous entry of that key.
        """
        now = self.clock()
        prepared: list[tuple[Namespace, str, _Entry | None]] = []
        for (ns, key), (value, ttl) in pairs.items():
            expiry = self._expiry(ttl, now)
            if expiry is not None and expiry <= now:
                prepared.append((tuple(ns), key, None))
            else:
                tag, payload = self._dump(value)
                prepared.append((tuple(ns), key, (tag, payload, expiry)))
        with self._lock:
            for ns, key, entry in prepared:
                if entry is not None:
                    self._data.setdefault(ns, {})[key] = entry
                    continue
                entries = self._data.get(ns)
                if entries is not None:
                    entries.pop(key, None)
                    if not entries:
                        del self._data[ns]

    def clear(self, namespaces: Sequence[Namespace] | None = None) -> None:
        """Delete the entries of exactly these namespaces, or everything if ``None``."""
        with self._lock:
            if namespaces is None:
                self._data.clear()
                return
            for ns in namespaces:
                self._data.pop(tuple(ns), None)

    async def aget(self, keys: Sequence[FullKey]) -> dict[FullKey, ValueT]:
        """Async :meth:`get` (runs inline: no I/O is involved)."""
        return self.get(keys)

    async def aset(self, pairs: Mapping[FullKey, tuple[ValueT, int | None]]) -> None:
        """Async :meth:`set` (runs inline: no I/O is involved)."""
        self.set(pairs)

    async def aclear(self, namespaces: Sequence[Namespace] | None = None) -> None:
        """Async :meth:`clear` (runs inline: no I/O is involved)."""
        self.clear(namespaces)
