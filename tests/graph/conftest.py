"""Fixtures shared by the StateGraph builder tests.

``run`` is parametrized over the sync API (``invoke``/``stream``) and the async API
(``ainvoke``/``astream`` driven by ``asyncio.run``), so every test that uses it checks
both paths with the same assertions.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from tests.executor_fixtures import shared_list, with_executor


class Runner:
    """Run a compiled graph through either the sync or the async API.

    With an ``executor`` (tests marked ``executors``), every run gets it as
    ``config["executor"]``, so the same assertions hold on threads, Ray and Dask.
    """

    def __init__(self, mode: str, executor: Any = None) -> None:
        self.mode = mode
        self.executor = executor

    def log(self) -> list[Any]:
        """A list for the test's nodes to record calls in (shared with remote workers)."""
        return shared_list(self.executor)

    @property
    def is_async(self) -> bool:
        return self.mode == "async"

    def invoke(self, graph: Any, input: Any, config: Any = None, **kwargs: Any) -> Any:
        config = with_executor(config, self.executor)
        if self.is_async:
            return asyncio.run(graph.ainvoke(input, config, **kwargs))
        return graph.invoke(input, config, **kwargs)

    def stream(self, graph: Any, input: Any, config: Any = None, **kwargs: Any) -> list[Any]:
        config = with_executor(config, self.executor)
        if self.is_async:

            async def collect() -> list[Any]:
                return [chunk async for chunk in graph.astream(input, config, **kwargs)]

            return asyncio.run(collect())
        return list(graph.stream(input, config, **kwargs))


@pytest.fixture(params=["sync", "async"])
def run(request: pytest.FixtureRequest, executor: Any) -> Runner:
    """A :class:`Runner` for the sync API, then for the async API."""
    return Runner(request.param, executor)
