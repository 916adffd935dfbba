"""Fixtures for the checkpoint tests (the harness itself is in ``saver_harness.py``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from saver_harness import SAVER_KINDS, Api, PgSchema, open_saver


@pytest.fixture(params=SAVER_KINDS)
def saver_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=["sync", "async"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def api(saver_kind: str, mode: str, tmp_path: Path) -> AsyncIterator[Api]:
    saver, close, schema = await open_saver(saver_kind, tmp_path)
    try:
        yield Api(saver, saver_kind, mode, pg=schema)
    finally:
        await close()


@pytest.fixture
def pg_schema() -> Iterator[PgSchema]:
    """A fresh PostgreSQL schema (skipped when the server is unreachable outside CI)."""
    schema = PgSchema()
    try:
        yield schema
    finally:
        schema.drop()
