"""Fixtures for the differential regression tests.

These tests pin behaviour recorded from LangGraph 1.2.24 (black box) by the
differential fuzzer in ``tools/differential``. They run on stategraph only; LangGraph
is not needed. ``runner`` runs each test through the sync and the async API.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest


class Runner:
    """Calls the sync or the async twin of a run API, so one test covers both."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.is_async = mode == "async"

    def invoke(self, graph: Any, *args: Any, **kwargs: Any) -> Any:
        """``graph.invoke`` or ``asyncio.run(graph.ainvoke(...))``."""
        if self.is_async:
            return asyncio.run(graph.ainvoke(*args, **kwargs))
        return graph.invoke(*args, **kwargs)

    def stream(self, graph: Any, *args: Any, **kwargs: Any) -> list[Any]:
        """All chunks of ``graph.stream`` / ``graph.astream`` as a list."""
        if self.is_async:

            async def collect() -> list[Any]:
                return [c async for c in graph.astream(*args, **kwargs)]

            return asyncio.run(collect())
        return list(graph.stream(*args, **kwargs))


@pytest.fixture(params=["sync", "async"])
def runner(request: pytest.FixtureRequest) -> Runner:
    """The sync API, then the async API."""
    return Runner(request.param)
