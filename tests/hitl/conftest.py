"""Fixtures of the human-in-the-loop tests."""

from __future__ import annotations

from typing import Any

import pytest

from ._support import Runner


@pytest.fixture(params=["sync", "async"])
def runner(request: pytest.FixtureRequest, executor: Any) -> Runner:
    """Run each test body once through the sync API and once through the async API."""
    return Runner(str(request.param), executor)
