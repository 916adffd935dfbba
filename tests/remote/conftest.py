"""Fixtures of the remote client tests: a hostile server, and calls made sync or async."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from stategraph.pregel.remote import RemoteGraph

from .hostile import HostileServer

CONFIG = {"configurable": {"thread_id": "t1"}}


@pytest.fixture
def server() -> Iterator[HostileServer]:
    """A hostile server on loopback; routes are set by each test."""
    with HostileServer() as srv:
        yield srv


def reader_threads() -> list[threading.Thread]:
    """The remote client's worker threads still alive."""
    return [t for t in threading.enumerate() if t.name.startswith("stategraph-remote")]


def wait_no_reader_threads(seconds: float = 5.0) -> list[threading.Thread]:
    deadline = time.monotonic() + seconds
    while reader_threads() and time.monotonic() < deadline:
        time.sleep(0.01)
    return reader_threads()


class Caller:
    """Calls the sync or the async twin of a RemoteGraph method, so a test covers both."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.is_async = mode == "async"

    def _run(self, make: Any) -> Any:
        return asyncio.run(make())

    def invoke(self, graph: RemoteGraph, *args: Any, **kwargs: Any) -> Any:
        if self.is_async:
            return self._run(lambda: graph.ainvoke(*args, **kwargs))
        return graph.invoke(*args, **kwargs)

    def stream(self, graph: RemoteGraph, *args: Any, **kwargs: Any) -> list[Any]:
        if self.is_async:

            async def collect() -> list[Any]:
                return [c async for c in graph.astream(*args, **kwargs)]

            return self._run(collect)
        return list(graph.stream(*args, **kwargs))

    def get_state(self, graph: RemoteGraph, config: Any = CONFIG) -> Any:
        if self.is_async:
            return self._run(lambda: graph.aget_state(config))
        return graph.get_state(config)

    def history(self, graph: RemoteGraph, config: Any = CONFIG, **kwargs: Any) -> list[Any]:
        if self.is_async:

            async def collect() -> list[Any]:
                return [s async for s in graph.aget_state_history(config, **kwargs)]

            return self._run(collect)
        return list(graph.get_state_history(config, **kwargs))

    def update_state(self, graph: RemoteGraph, values: Any, config: Any = CONFIG) -> Any:
        if self.is_async:
            return self._run(lambda: graph.aupdate_state(config, values))
        return graph.update_state(config, values)

    def get_graph(self, graph: RemoteGraph) -> Any:
        if self.is_async:
            return self._run(lambda: graph.aget_graph())
        return graph.get_graph()


@pytest.fixture(params=["sync", "async"])
def call(request: pytest.FixtureRequest) -> Iterator[Caller]:
    """Each test runs once through the sync methods and once through the async ones;
    no reader thread may outlive an async call."""
    caller = Caller(request.param)
    yield caller
    if caller.is_async:
        assert wait_no_reader_threads() == []
