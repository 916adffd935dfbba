"""Fixtures of the PostgreSQL run queue tests: one migrated schema per session,
emptied before each test (``STATEGRAPH_TEST_PG``, default the ``test`` database)."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator, Iterator

import psycopg
import pytest
from tests.checkpoint.saver_harness import PG_URL, require_postgres

try:
    from stategraph.server._pgqueue import PostgresRunQueue
except ImportError:  # no server-postgres extra (procrastinate) in this environment
    collect_ignore_glob = ["test_*.py"]

SCHEMA = f"sg_pgq_{os.getpid()}_{uuid.uuid4().hex[:6]}"


@pytest.fixture(scope="session")
def pg_schema() -> Iterator[str]:
    """A schema set up once for the session (dropped at the end)."""
    require_postgres()

    async def setup() -> None:
        q = PostgresRunQueue(PG_URL, schema=SCHEMA)
        await q.setup()
        await q.aclose()

    asyncio.run(setup())
    yield SCHEMA
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")


def empty(schema: str) -> None:
    """Remove every run, claim and tick of ``schema``."""
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(
            f"TRUNCATE {schema}.procrastinate_jobs, {schema}.procrastinate_workers,"
            f" {schema}.procrastinate_periodic_defers, {schema}.procrastinate_events CASCADE"
        )


@pytest.fixture
async def queue(pg_schema: str) -> AsyncIterator[PostgresRunQueue]:
    """An empty, set-up queue on the session's schema."""
    empty(pg_schema)
    q = PostgresRunQueue(PG_URL, schema=pg_schema, pool_max=6)
    await q.setup()
    yield q
    await q.aclose()
