"""NUL in store namespaces, keys and values: one answer on every store (issue 20 §5).

A NUL in a namespace label is an :class:`InvalidNamespaceError`, in a key an
:class:`~stategraph.errors.InvalidIdentifierError` (both ``ValueError``), raised before
anything is written; a NUL inside a stored *value* is data: it round-trips and an
exact-match filter on it finds the item on every store (SQLite's JSON functions stop
at a NUL, so that condition is left to the Python filter).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from stategraph.errors import InvalidIdentifierError
from stategraph.store.base import InvalidNamespaceError
from stategraph.store.postgres import PostgresStore
from stategraph.store.postgres.aio import AsyncPostgresStore

from .helpers import Api
from .pg_helpers import Schema, require_postgres

VALUE = {"s": "alice\x00mallory", "n": 1}


async def _check(api: Api) -> None:
    await api.put(("a",), "k", VALUE)
    with pytest.raises(InvalidNamespaceError, match="NUL"):
        await api.put(("a\x00b",), "k", {"x": 1})
    with pytest.raises(InvalidIdentifierError, match="NUL") as info:
        await api.put(("a",), "k\x00", {"x": 1})
    assert "'k\\x00'" in str(info.value) and isinstance(info.value, ValueError)
    with pytest.raises(InvalidIdentifierError, match="NUL"):
        await api.get(("a",), "k\x00")
    with pytest.raises(InvalidNamespaceError, match="NUL"):
        await api.search(("a\x00",))
    with pytest.raises(InvalidIdentifierError, match="NUL"):
        await api.delete(("a",), "k\x00")
    assert [i.key for i in await api.search(("a",))] == ["k"]
    assert (await api.get(("a",), "k")).value == VALUE
    assert [i.key for i in await api.search(("a",), filter={"s": "alice\x00mallory"})] == ["k"]
    assert [i.key for i in await api.search(("a",), filter={"s": {"$eq": "alice\x00mallory"}})] == [
        "k"
    ]
    assert await api.search(("a",), filter={"s": "alice"}) == []
    assert await api.search(("a",), filter={"s": "alice\x00"}) == []


async def test_nul_rule_on_local_stores(make_api: Callable[..., Api]) -> None:
    await _check(make_api())


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_nul_rule_on_postgres_stores(mode: str) -> None:
    require_postgres()
    schema = Schema()
    try:
        if mode == "sync":
            with PostgresStore.from_conn_string(schema.conninfo) as store:
                store.setup()
                await _check(Api(store, "sync"))
        else:
            async with AsyncPostgresStore.from_conn_string(schema.conninfo) as astore:
                await astore.setup()
                await _check(Api(astore, "async"))
    finally:
        schema.drop()
