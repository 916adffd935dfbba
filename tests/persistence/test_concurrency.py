"""Many runs at once on one saver, each on its own thread id, lose nothing.

Python threads share one ``SqliteSaver`` (one connection), or each open their own
saver on the same file; asyncio tasks share one saver. Every thread id must end with
exactly its own values and a complete, linked history.
"""

from __future__ import annotations

import asyncio
import threading
import time
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from persistence_helpers import LogState, cfg, cp_id, shape

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.checkpoint.sqlite import SqliteSaver
from stategraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from stategraph.graph import END, START, StateGraph

WORKERS = 8


def _graph(saver: Any, *, use_async: bool = False) -> Any:
    """``a -> (b, c) -> d``; each node yields control a little to interleave runs."""

    def make(name: str) -> Any:
        if use_async:

            async def anode(state: LogState) -> dict[str, Any]:
                await asyncio.sleep(0.001)
                return {"log": [name]}

            return anode

        def node(state: LogState) -> dict[str, Any]:
            time.sleep(0.001)
            return {"log": [name]}

        return node

    builder = StateGraph(LogState)
    for name in "abcd":
        builder.add_node(name, make(name))
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("a", "c")
    builder.add_edge(["b", "c"], "d")
    builder.add_edge("d", END)
    return builder.compile(checkpointer=saver)


def _expected(i: int) -> list[str]:
    return [f"in-{i}", "a", "b", "c", "d", f"again-{i}", "a", "b", "c", "d"]


HISTORY = [
    ("loop", 8, ()),
    ("loop", 7, ("d",)),
    ("loop", 6, ("b", "c")),
    ("loop", 5, ("a",)),
    ("input", 4, ("__start__",)),
    ("loop", 3, ()),
    ("loop", 2, ("d",)),
    ("loop", 1, ("b", "c")),
    ("loop", 0, ("a",)),
    ("input", -1, ("__start__",)),
]


def _check_threads(graph: Any) -> None:
    for i in range(WORKERS):
        snap = graph.get_state(cfg(f"t{i}"))
        assert snap.values == {"log": _expected(i)}, f"thread t{i}"
        history = list(graph.get_state_history(cfg(f"t{i}")))
        assert shape(history) == HISTORY, f"thread t{i}"
        for newer, older in pairwise(history):
            assert cp_id(newer.parent_config) == cp_id(older.config)
        assert all(s.config["configurable"]["thread_id"] == f"t{i}" for s in history)


def _run_threads(target: Any) -> None:
    errors: list[BaseException] = []
    barrier = threading.Barrier(WORKERS)

    def worker(i: int) -> None:
        try:
            barrier.wait(timeout=10)
            target(i)
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(WORKERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    assert errors == []


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_threads_sharing_one_saver_lose_nothing(tmp_path: Path, kind: str, durability: str) -> None:
    with (
        SqliteSaver.from_conn_string(str(tmp_path / "c.sqlite"))
        if kind == "sqlite"
        else InMemorySaver()
    ) as saver:
        graph = _graph(saver)

        def run(i: int) -> None:
            out = graph.invoke({"log": [f"in-{i}"]}, cfg(f"t{i}"), durability=durability)
            assert out == {"log": _expected(i)[:5]}
            out = graph.invoke({"log": [f"again-{i}"]}, cfg(f"t{i}"), durability=durability)
            assert out == {"log": _expected(i)}

        _run_threads(run)
        if durability == "exit":
            for i in range(WORKERS):
                history = list(graph.get_state_history(cfg(f"t{i}")))
                assert shape(history) == [("loop", 8, ()), ("loop", 3, ())]
                assert history[0].values == {"log": _expected(i)}
        else:
            _check_threads(graph)


def test_threads_with_their_own_connections_to_one_file_lose_nothing(tmp_path: Path) -> None:
    db = str(tmp_path / "shared.sqlite")

    def run(i: int) -> None:
        with SqliteSaver.from_conn_string(db) as saver:
            graph = _graph(saver)
            graph.invoke({"log": [f"in-{i}"]}, cfg(f"t{i}"), durability="sync")
            graph.invoke({"log": [f"again-{i}"]}, cfg(f"t{i}"), durability="sync")

    _run_threads(run)
    with SqliteSaver.from_conn_string(db) as saver:
        _check_threads(_graph(saver))


@pytest.mark.parametrize("kind", ["memory", "sqlite", "aiosqlite"])
async def test_concurrent_async_runs_lose_nothing(tmp_path: Path, kind: str) -> None:
    db = str(tmp_path / "async.sqlite")

    async def scenario(saver: Any) -> None:
        graph = _graph(saver, use_async=True)

        async def run(i: int) -> None:
            await graph.ainvoke({"log": [f"in-{i}"]}, cfg(f"t{i}"))
            out = await graph.ainvoke({"log": [f"again-{i}"]}, cfg(f"t{i}"), durability="sync")
            assert out == {"log": _expected(i)}

        await asyncio.gather(*(run(i) for i in range(WORKERS)))
        for i in range(WORKERS):
            snap = await graph.aget_state(cfg(f"t{i}"))
            assert snap.values == {"log": _expected(i)}
            history = [s async for s in graph.aget_state_history(cfg(f"t{i}"))]
            assert [s.metadata["step"] for s in history] == [s[1] for s in HISTORY]

    if kind == "memory":
        await scenario(InMemorySaver())
    elif kind == "sqlite":
        with SqliteSaver.from_conn_string(db) as saver:
            await scenario(saver)
    else:
        async with AsyncSqliteSaver.from_conn_string(db) as saver:
            await scenario(saver)
