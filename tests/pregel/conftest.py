"""Fixtures shared by the Pregel runtime tests: one ``runner`` that is sync or async."""

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

    def batch(self, graph: Any, *args: Any, **kwargs: Any) -> list[Any]:
        """``graph.batch`` or ``asyncio.run(graph.abatch(...))``."""
        if self.is_async:
            return asyncio.run(graph.abatch(*args, **kwargs))
        return graph.batch(*args, **kwargs)

    def get_state(self, graph: Any, config: Any) -> Any:
        """``graph.get_state`` or ``asyncio.run(graph.aget_state(...))``."""
        if self.is_async:
            return asyncio.run(graph.aget_state(config))
        return graph.get_state(config)


@pytest.fixture(params=["sync", "async"])
def runner(request: pytest.FixtureRequest) -> Runner:
    """A :class:`Runner` for the sync API and one for the async API."""
    return Runner(request.param)
