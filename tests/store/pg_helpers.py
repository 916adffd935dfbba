"""PostgreSQL fixtures for the store tests: a fresh schema per store, real server."""

from __future__ import annotations

import os
import uuid
from typing import Any

import psycopg
import pytest

PG_URL = os.environ.get("STATEGRAPH_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")


def require_postgres() -> None:
    """Skip when the server is unreachable (fail under CI)."""
    try:
        psycopg.connect(PG_URL, connect_timeout=5).close()
    except psycopg.OperationalError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"PostgreSQL at {PG_URL} is unreachable: {exc}")
        pytest.skip(f"PostgreSQL at {PG_URL} is unreachable: {exc}")


class Schema:
    """A fresh schema (``sg_store_test_<hex>``); ``conninfo`` puts it on the search_path."""

    def __init__(self) -> None:
        self.name = f"sg_store_test_{uuid.uuid4().hex}"
        with psycopg.connect(PG_URL, autocommit=True) as admin:
            admin.execute(f"CREATE SCHEMA {self.name}")
        self.conninfo = psycopg.conninfo.make_conninfo(
            PG_URL, options=f"-c search_path={self.name}"
        )

    def drop(self) -> None:
        with psycopg.connect(PG_URL, autocommit=True) as admin:
            admin.execute(f"DROP SCHEMA IF EXISTS {self.name} CASCADE")

    def tables(self) -> list[str]:
        with psycopg.connect(self.conninfo, autocommit=True) as conn:
            rows = conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = %s "
                "ORDER BY table_name",
                (self.name,),
            ).fetchall()
        return [row[0] for row in rows]

    def query(self, sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
        with psycopg.connect(self.conninfo, autocommit=True) as conn:
            return conn.execute(sql, params).fetchall()


def has_pgvector() -> bool:
    """Whether the server can create the ``vector`` extension."""
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        return bool(
            conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone()
        )
