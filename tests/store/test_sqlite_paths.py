"""The SQLite stores answer at LangGraph's module paths (``langgraph.store.sqlite`` and
``langgraph.store.sqlite.aio``) and at the earlier ``stategraph.store.sqlite_aio``."""

from __future__ import annotations

import asyncio
import importlib
import subprocess
import sys


def test_async_store_at_langgraphs_paths() -> None:
    aio = importlib.import_module("stategraph.store.sqlite.aio")
    package = importlib.import_module("stategraph.store.sqlite")
    earlier = importlib.import_module("stategraph.store.sqlite_aio")
    assert aio.AsyncSqliteStore.__module__ == "stategraph.store.sqlite.aio"
    assert package.AsyncSqliteStore is aio.AsyncSqliteStore
    assert earlier.AsyncSqliteStore is aio.AsyncSqliteStore
    assert package.SqliteStore.__module__ == "stategraph.store.sqlite"
    assert sorted(package.__all__) == ["AsyncSqliteStore", "MIGRATIONS", "SqliteStore"]
    assert "AsyncSqliteStore" in dir(package)


def test_the_package_loads_the_async_store_on_first_use() -> None:
    code = (
        "import sys\n"
        "from stategraph.store.sqlite import SqliteStore\n"
        "assert 'stategraph.store.sqlite.aio' not in sys.modules\n"
        "from stategraph.store.sqlite import AsyncSqliteStore\n"
        "assert AsyncSqliteStore.__module__ == 'stategraph.store.sqlite.aio'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_async_store_from_langgraphs_path_works() -> None:
    from stategraph.store.sqlite.aio import AsyncSqliteStore

    async def go() -> object:
        async with AsyncSqliteStore.from_conn_string(":memory:") as store:
            await store.aput(("users", "alice"), "prefs", {"theme": "dark"})
            item = await store.aget(("users", "alice"), "prefs")
            return None if item is None else item.value

    assert asyncio.run(go()) == {"theme": "dark"}
