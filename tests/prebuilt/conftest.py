"""Fixtures shared by the prebuilt tests.

``run`` is parametrized over the sync API (``invoke``/``stream``) and the async API
(``ainvoke``/``astream`` driven by ``asyncio.run``), so a test using it checks both.
"""

from __future__ import annotations

import pytest

from .helpers import Runner


@pytest.fixture(params=["sync", "async"])
def run(request: pytest.FixtureRequest) -> Runner:
    """A :class:`Runner` for the sync API, then for the async API."""
    return Runner(request.param)
