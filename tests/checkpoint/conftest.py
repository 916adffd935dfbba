"""Fixtures for the checkpoint tests (the harness itself is in ``saver_harness.py``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from saver_harness import SAVER_KINDS, Api, make_saver


@pytest.fixture(params=SAVER_KINDS)
def saver_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=["sync", "async"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def api(saver_kind: str, mode: str, tmp_path: Path) -> AsyncIterator[Api]:
    saver, close = make_saver(saver_kind, tmp_path)
    try:
        yield Api(saver, saver_kind, mode)
    finally:
        close()
