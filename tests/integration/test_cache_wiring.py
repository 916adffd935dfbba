"""Node cache wiring: CachePolicy on nodes, compile(cache=...), replayed writes, clear_cache."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typing_extensions import TypedDict

from stategraph.cache.base import BaseCache
from stategraph.cache.memory import InMemoryCache
from stategraph.cache.sqlite import SqliteCache
from stategraph.graph import END, START, StateGraph
from stategraph.types import CachePolicy


class S(TypedDict, total=False):
    x: int
    y: int
    z: int


@pytest.fixture(params=["memory", "sqlite"])
def cache(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BaseCache[Any]]:
    if request.param == "memory":
        yield InMemoryCache()
    else:
        c = SqliteCache(path=str(tmp_path / "cache.sqlite"))
        try:
            yield c
        finally:
            c.close()


def _graph(cache: BaseCache[Any], calls: dict[str, int], ttl: int | None = None) -> Any:
    def double(state: S) -> dict[str, Any]:
        calls["double"] += 1
        return {"y": state["x"] * 2}

    def plus_one(state: S) -> dict[str, Any]:
        calls["plus_one"] += 1
        return {"z": state["y"] + 1}

    b = StateGraph(S)
    b.add_node("double", double, cache_policy=CachePolicy(ttl=ttl))
    b.add_node("plus_one", plus_one)
    b.add_edge(START, "double")
    b.add_edge("double", "plus_one")
    b.add_edge("plus_one", END)
    return b.compile(cache=cache)


def test_cached_node_is_not_rerun_and_its_writes_are_replayed(cache: BaseCache[Any]) -> None:
    calls = {"double": 0, "plus_one": 0}
    graph = _graph(cache, calls)
    assert graph.invoke({"x": 3}) == {"x": 3, "y": 6, "z": 7}
    assert graph.invoke({"x": 3}) == {"x": 3, "y": 6, "z": 7}
    assert calls == {"double": 1, "plus_one": 2}
    assert graph.invoke({"x": 4}) == {"x": 4, "y": 8, "z": 9}
    assert calls == {"double": 2, "plus_one": 3}


def test_updates_stream_marks_cached_results(cache: BaseCache[Any]) -> None:
    calls = {"double": 0, "plus_one": 0}
    graph = _graph(cache, calls)
    first = list(graph.stream({"x": 1}, stream_mode="updates"))
    assert first == [{"double": {"y": 2}}, {"plus_one": {"z": 3}}]
    second = list(graph.stream({"x": 1}, stream_mode="updates"))
    assert second == [
        {"double": {"y": 2}, "__metadata__": {"cached": True}},
        {"plus_one": {"z": 3}},
    ]


def test_clear_cache_forces_rerun(cache: BaseCache[Any]) -> None:
    calls = {"double": 0, "plus_one": 0}
    graph = _graph(cache, calls)
    graph.invoke({"x": 5})
    graph.clear_cache()
    graph.invoke({"x": 5})
    assert calls["double"] == 2
    graph.clear_cache(nodes=["double"])
    graph.invoke({"x": 5})
    assert calls["double"] == 3
    with pytest.raises(ValueError, match="unknown nodes"):
        graph.clear_cache(nodes=["nope"])


def test_ttl_expiry_reruns(cache: BaseCache[Any]) -> None:
    now = [1000.0]
    cache.clock = lambda: now[0]
    calls = {"double": 0, "plus_one": 0}
    graph = _graph(cache, calls, ttl=10)
    graph.invoke({"x": 2})
    now[0] += 5
    graph.invoke({"x": 2})
    assert calls["double"] == 1
    now[0] += 10
    graph.invoke({"x": 2})
    assert calls["double"] == 2


async def test_cache_async(cache: BaseCache[Any]) -> None:
    calls = {"double": 0, "plus_one": 0}
    graph = _graph(cache, calls)
    assert await graph.ainvoke({"x": 7}) == {"x": 7, "y": 14, "z": 15}
    assert await graph.ainvoke({"x": 7}) == {"x": 7, "y": 14, "z": 15}
    assert calls == {"double": 1, "plus_one": 2}
    chunks = [c async for c in graph.astream({"x": 7}, stream_mode="updates")]
    assert chunks[0] == {"double": {"y": 14}, "__metadata__": {"cached": True}}
    await graph.aclear_cache()
    await graph.ainvoke({"x": 7})
    assert calls["double"] == 2


def test_custom_key_func(cache: BaseCache[Any]) -> None:
    calls = {"n": 0}

    def node(state: S) -> dict[str, Any]:
        calls["n"] += 1
        return {"y": state["x"]}

    b = StateGraph(S)
    b.add_node("node", node, cache_policy=CachePolicy(key_func=lambda s: str(s["x"] % 2)))
    b.add_edge(START, "node")
    graph = b.compile(cache=cache)
    assert graph.invoke({"x": 1})["y"] == 1
    assert graph.invoke({"x": 3})["y"] == 1  # same key (odd): cached writes replayed
    assert graph.invoke({"x": 2})["y"] == 2
    assert calls["n"] == 2


def test_graph_without_cache_rejects_clear_cache() -> None:
    b = StateGraph(S)
    b.add_node("n", lambda s: {"y": 1})
    b.add_edge(START, "n")
    with pytest.raises(ValueError, match="no cache"):
        b.compile().clear_cache()
    assert asyncio.run(b.compile().ainvoke({"x": 1})) == {"x": 1, "y": 1}
