"""Fixtures shared by the Pregel runtime tests: one ``runner`` that is sync or async."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from tests.executor_fixtures import shared_list, with_executor


class Runner:
    """Calls the sync or the async twin of a run API, so one test covers both."""

    def __init__(self, mode: str, executor: Any = None) -> None:
        self.mode = mode
        self.is_async = mode == "async"
        # tests marked ``executors``: every run gets it as config["executor"]
        self.executor = executor

    def log(self) -> list[Any]:
        """A list for the test's nodes to record calls in (shared with remote workers)."""
        return shared_list(self.executor)

    def _config(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
        if self.executor is None:
            return args
        if len(args) > 1:
            return (args[0], with_executor(args[1], self.executor), *args[2:])
        kwargs["config"] = with_executor(kwargs.get("config"), self.executor)
        return args

    def invoke(self, graph: Any, *args: Any, **kwargs: Any) -> Any:
        """``graph.invoke`` or ``asyncio.run(graph.ainvoke(...))``."""
        args = self._config(args, kwargs)
        if self.is_async:
            return asyncio.run(graph.ainvoke(*args, **kwargs))
        return graph.invoke(*args, **kwargs)

    def stream(self, graph: Any, *args: Any, **kwargs: Any) -> list[Any]:
        """All chunks of ``graph.stream`` / ``graph.astream`` as a list."""
        args = self._config(args, kwargs)
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
def runner(request: pytest.FixtureRequest, executor: Any) -> Runner:
    """A :class:`Runner` for the sync API and one for the async API."""
    return Runner(request.param, executor)
