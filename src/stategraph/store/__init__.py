"""Long-term memory stores shared across threads of a graph.

A store keeps JSON-like documents (:class:`~stategraph.store.base.Item`) under
hierarchical namespaces (tuples of strings). ``stategraph.store.base`` defines the
:class:`~stategraph.store.base.BaseStore` interface and its operations;
``stategraph.store.memory`` offers :class:`~stategraph.store.memory.InMemoryStore`,
``stategraph.store.sqlite`` the embedded :class:`~stategraph.store.sqlite.SqliteStore`
and ``stategraph.store.sqlite.aio`` (LangGraph's path; ``stategraph.store.sqlite_aio``
re-exports it) its asyncio twin :class:`~stategraph.store.sqlite.aio.AsyncSqliteStore`.

This package module imports nothing so that importing a submodule stays cheap.
"""

from __future__ import annotations

__all__: list[str] = []
