"""The shared store suite (basic, semantic search, TTL) against the real PostgreSQL
server: PostgresStore through its sync and async APIs, AsyncPostgresStore through its
async API. Each store gets a fresh schema. Vectors use the ``real[]`` fallback (ranked
in SQL); the pgvector path is tested in ``test_postgres_store.py`` when the server has
the extension."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import psycopg
import pytest

from stategraph.store.postgres import PostgresStore
from stategraph.store.postgres.aio import AsyncPostgresStore

from . import test_suite_basic as _basic
from . import test_suite_semantic_ttl as _semantic
from .helpers import Api
from .pg_helpers import Schema, require_postgres

# the suites' tests and their module-level fixtures, collected here again with the
# PostgreSQL ``make_api`` below
for _module in (_basic, _semantic):
    for _name, _obj in vars(_module).items():
        if _name.startswith("test_") or type(_obj).__name__ == "FixtureFunctionDefinition":
            globals()[_name] = _obj

PG_CASES = [("postgres", "sync"), ("postgres", "async"), ("async_postgres", "async")]


class PgApi(Api):
    """:class:`Api` that opens the async store's connection on first use (in the loop)."""

    def __init__(self, store: Any, mode: str, conninfo: str | None) -> None:
        super().__init__(store, mode)
        self.conninfo = conninfo

    def __getattr__(self, name: str) -> Callable[..., Any]:
        call = super().__getattr__(name)

        async def opened(*args: Any, **kwargs: Any) -> Any:
            if self.conninfo is not None:
                self.store.conn = await psycopg.AsyncConnection.connect(
                    self.conninfo, autocommit=True
                )
                self.conninfo = None
            return await call(*args, **kwargs)

        return opened


@pytest.fixture(params=PG_CASES, ids=lambda case: f"{case[0]}-{case[1]}")
async def make_api(request: pytest.FixtureRequest) -> AsyncIterator[Callable[..., Api]]:
    require_postgres()
    kind, mode = request.param
    made: list[tuple[Any, Schema]] = []

    def factory(**kwargs: Any) -> Api:
        schema = Schema()
        if kind == "postgres":
            conn = psycopg.connect(schema.conninfo, autocommit=True)
            store: Any = PostgresStore(conn, vector="array", **kwargs)
            made.append((store, schema))
            return Api(store, mode)
        store = AsyncPostgresStore(None, vector="array", **kwargs)
        made.append((store, schema))
        return PgApi(store, mode, schema.conninfo)

    yield factory
    for store, schema in made:
        if isinstance(store, AsyncPostgresStore):
            await store.stop_ttl_sweeper()
            if store.conn is not None:
                await store.conn.close()
        else:
            store.stop_ttl_sweeper()
            store.conn.close()
        schema.drop()
