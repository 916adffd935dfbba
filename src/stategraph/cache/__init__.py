"""Node-result caches: keep a node's writes keyed by its input, with optional TTL.

* :mod:`stategraph.cache.base` — :class:`BaseCache`, the contract (sync and async).
* :mod:`stategraph.cache.memory` — :class:`InMemoryCache`, thread-safe, per process.
* :mod:`stategraph.cache.sqlite` — :class:`SqliteCache`, durable, on stdlib ``sqlite3``.

Names are re-exported lazily so importing this package costs nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["BaseCache", "FullKey", "InMemoryCache", "Namespace", "SqliteCache"]

if TYPE_CHECKING:
    from stategraph.cache.base import BaseCache, FullKey, Namespace
    from stategraph.cache.memory import InMemoryCache
    from stategraph.cache.sqlite import SqliteCache

_LAZY = {
    "BaseCache": "stategraph.cache.base",
    "FullKey": "stategraph.cache.base",
    "Namespace": "stategraph.cache.base",
    "InMemoryCache": "stategraph.cache.memory",
    "SqliteCache": "stategraph.cache.sqlite",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'stategraph.cache' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
