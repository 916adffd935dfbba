"""``stategraph.store.sqlite_aio``: the earlier path of
:class:`~stategraph.store.sqlite.aio.AsyncSqliteStore`, kept importable.

The store lives in :mod:`stategraph.store.sqlite.aio`, LangGraph's module path
(``langgraph.store.sqlite.aio``).
"""

from __future__ import annotations

from stategraph.store.sqlite.aio import AsyncSqliteStore

__all__ = ["AsyncSqliteStore"]
