"""Fixtures of the differential HITL regression tests."""

from __future__ import annotations

import pytest

from ._support import Runner


@pytest.fixture(params=["sync", "async"])
def runner(request: pytest.FixtureRequest) -> Runner:
    """Run each test body once through the sync API and once through the async API."""
    return Runner(str(request.param))
