"""The node-cache contract: serialized values under ``(namespace, key)`` with a TTL.

A cache entry is addressed by a :data:`FullKey` ``(namespace, key)``: the namespace is a
tuple of strings (the runtime uses the node's identity), the key a string (a hash of
the node's input). Values are stored serialized with the cache's ``serde`` and
deserialized on every read, so a cached value is never shared mutable state.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic

from typing_extensions import TypeVar

if TYPE_CHECKING:
    from stategraph.checkpoint.serde.base import SerializerProtocol

__all__ = ["BaseCache", "FullKey", "Namespace", "ValueT"]

ValueT = TypeVar("ValueT", default=Any)
"""Type of the cached values (``Any`` unless a subclass or annotation narrows it)."""

Namespace = tuple[str, ...]
"""A cache namespace, e.g. ``("my_node",)``."""

FullKey = tuple[Namespace, str]
"""The address of one cache entry: ``(namespace, key)``."""

Clock = Callable[[], float]
"""Returns the current time in seconds (``time.time`` unless injected, e.g. by tests)."""


class BaseCache(ABC, Generic[ValueT]):
    """Base class of node caches; subclasses implement :meth:`get`, :meth:`set`, :meth:`clear`.

    The async methods run the sync ones on a worker thread unless a subclass provides a
    native implementation.

    Args:
        serde: serializer for stored values; defaults to stategraph's
            ``JsonPlusSerializer``.
        clock: time source for expiry, in seconds; defaults to :func:`time.time`.
    """

    serde: SerializerProtocol
    """Serializer turning values into ``(type_tag, bytes)`` and back."""

    def __init__(self, *, serde: SerializerProtocol | None = None, clock: Clock | None = None):
        if serde is None:
            from stategraph.checkpoint.serde.jsonplus import JsonPlusSerializer

            serde = JsonPlusSerializer()
        self.serde = serde
        self.clock: Clock = clock if clock is not None else time.time

    def _expiry(self, ttl: int | float | None, now: float) -> float | None:
        """Absolute expiry time for ``ttl`` seconds from ``now`` (``None`` = never)."""
        if ttl is None:
            return None
        if isinstance(ttl, bool) or not isinstance(ttl, (int, float)):
            raise TypeError(
                f"Cache TTL must be a number of seconds or None, got {ttl!r}; "
                "set CachePolicy(ttl=...) to an int."
            )
        return now + ttl

    def _dump(self, value: Any) -> tuple[str, bytes]:
        return self.serde.dumps_typed(value)

    def _load(self, tag: str, payload: bytes) -> Any:
        return self.serde.loads_typed((tag, payload))

    @abstractmethod
    def get(self, keys: Sequence[FullKey]) -> dict[FullKey, ValueT]:
        """Return the cached value of each key in ``keys``; missing or expired keys are absent."""

    @abstractmethod
    def set(self, pairs: Mapping[FullKey, tuple[ValueT, int | None]]) -> None:
        """Store ``{full_key: (value, ttl_seconds)}``; a ``None`` TTL never expires.

        A TTL of zero or less stores nothing and drops any previous entry of that key.
        """

    @abstractmethod
    def clear(self, namespaces: Sequence[Namespace] | None = None) -> None:
        """Delete the entries of exactly these namespaces, or everything if ``None``."""

    async def aget(self, keys: Sequence[FullKey]) -> dict[FullKey, ValueT]:
        """Async :meth:`get`."""
        import asyncio

        return await asyncio.to_thread(self.get, keys)

    async def aset(self, pairs: Mapping[FullKey, tuple[ValueT, int | None]]) -> None:
        """Async :meth:`set`."""
        import asyncio

        await asyncio.to_thread(self.set, pairs)

    async def aclear(self, namespaces: Sequence[Namespace] | None = None) -> None:
        """Async :meth:`clear`."""
        import asyncio

        await asyncio.to_thread(self.clear, namespaces)
