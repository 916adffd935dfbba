"""Fixtures of the thread-lease tests: a storage target per saver kind."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from lease_helpers import PG_URL, PgSchema


def _postgres_up() -> bool:
    try:
        import psycopg

        psycopg.connect(PG_URL, connect_timeout=5).close()
    except Exception:
        return False
    return True


@pytest.fixture
def target_for(tmp_path: Path) -> Iterator[object]:
    """``target_for(kind)``: a SQLite file path, a PostgreSQL conninfo on a fresh
    schema (dropped afterwards), or ``""`` for the in-memory saver."""
    schemas: list[PgSchema] = []

    def make(kind: str) -> str:
        if kind == "sqlite":
            return str(tmp_path / "threads.sqlite")
        if kind == "postgres":
            if not _postgres_up():
                if os.environ.get("CI"):
                    pytest.fail(f"PostgreSQL at {PG_URL} is unreachable (CI must start it)")
                pytest.skip(f"PostgreSQL at {PG_URL} is unreachable")
            schema = PgSchema()
            schemas.append(schema)
            return schema.conninfo
        return ""

    try:
        yield make
    finally:
        for schema in schemas:
            schema.drop()
