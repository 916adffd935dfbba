"""Run the workloads of ``langgraph_suite.py`` on one library and time them in CPU.

The same method as ``../shared/langgraph-bench/run.py``: every workload is built and
compiled once, run once to record what it did (chunks, node updates), warmed up, then
sampled round-robin (shuffled each round) so load from other processes hits every
workload alike. A sample is ``graph.stream`` (``astream`` for ``NAME_async``) consumed
to the end; short workloads loop inside one sample until it lasts ``min_sample``
seconds. Times are per single run: wall (``perf_counter``) and CPU (``process_time``:
this process, every thread, user + system).

Nothing here imports a library at module level, so a LangGraph venv can run it.
"""

from __future__ import annotations

import asyncio
import gc
import math
import random
import sqlite3
import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from bench import langgraph_suite as W

__all__ = [
    "ASYNC_SUFFIX",
    "SQLITE_SYNCHRONOUS",
    "Timed",
    "consume_async",
    "consume_sync",
    "drop_threads",
    "set_sqlite_synchronous",
    "split_name",
    "time_workloads",
]

ASYNC_SUFFIX = "_async"

SQLITE_SYNCHRONOUS = ("native", "off", "normal", "full", "extra")
"""``--sqlite-synchronous`` choices: "native" keeps what each saver sets itself."""

_SYNC_NAMES = {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}


def split_name(full: str) -> tuple[str, bool]:
    """``'fanout_to_subgraph_100x_async'`` -> ``('fanout_to_subgraph_100x', True)``.

    Raises ``KeyError`` for a name the suite does not know, or an async SQLite name.
    """
    aio = full.endswith(ASYNC_SUFFIX)
    name = full[: -len(ASYNC_SUFFIX)] if aio else full
    _, kind = W.parse(name)
    if aio and kind == "sqlite":
        raise KeyError(f"{full}: the SQLite saver of the suite is sync-only")
    return name, aio


def consume_sync(graph: Any, data: Any, config: dict, kwargs: dict) -> int:
    """Stream one run to the end; return the number of chunks."""
    n = 0
    for _ in graph.stream(data, config, **kwargs):
        n += 1
    return n


async def consume_async(graph: Any, data: Any, config: dict, kwargs: dict) -> int:
    """``astream`` one run to the end; return the number of chunks."""
    n = 0
    async for _ in graph.astream(data, config, **kwargs):
        n += 1
    return n


def drop_threads(graph: Any, configs: Iterable[dict]) -> None:
    """Delete the checkpointed threads of ``configs`` (outside any timed region)."""
    saver = getattr(graph, "checkpointer", None)
    if saver is None or not hasattr(saver, "delete_thread"):
        return
    for cfg in configs:
        saver.delete_thread(cfg["configurable"]["thread_id"])


def _sqlite_conn(graph: Any) -> sqlite3.Connection | None:
    conn = getattr(getattr(graph, "checkpointer", None), "conn", None)
    return conn if isinstance(conn, sqlite3.Connection) else None


def set_sqlite_synchronous(graph: Any, mode: str) -> str | None:
    """Set ``PRAGMA synchronous`` on the graph's SQLite saver; return the setting in force.

    ``mode`` is one of :data:`SQLITE_SYNCHRONOUS`; "native" changes nothing and only
    reads the setting back. Returns ``None`` when the graph has no SQLite saver. Call it
    after a first run, so the saver's own set-up (which may set the pragma) is done.
    """
    if mode not in SQLITE_SYNCHRONOUS:
        raise ValueError(f"sqlite synchronous {mode!r}: use one of {SQLITE_SYNCHRONOUS}")
    conn = _sqlite_conn(graph)
    if conn is None:
        return None
    if mode != "native":
        conn.execute(f"PRAGMA synchronous = {mode.upper()}")
    level = conn.execute("PRAGMA synchronous").fetchone()[0]
    journal = conn.execute("PRAGMA journal_mode").fetchone()[0]
    return f"synchronous={_SYNC_NAMES.get(level, level)} journal_mode={journal}"


def _node_counts(graph: Any, data: Any, config: dict, kwargs: dict, loop: Any) -> tuple[int, dict]:
    if loop is not None:

        async def collect() -> list[Any]:
            return [c async for c in graph.astream(data, config, **kwargs)]

        chunks = loop.run_until_complete(collect())
    else:
        chunks = list(graph.stream(data, config, **kwargs))
    counts: Counter[str] = Counter()
    for chunk in chunks:
        if isinstance(chunk, dict):
            counts.update(chunk.keys())
        else:
            counts[f"<{type(chunk).__name__}>"] += 1
    return len(chunks), dict(sorted(counts.items()))


class Timed:
    """One workload of one library: built once, sampled many times."""

    def __init__(self, lib: str, full_name: str, sqlite_synchronous: str = "native") -> None:
        self.full_name = full_name
        self.name, self.aio = split_name(full_name)
        self.kwargs = W.stream_kwargs(self.name)
        start = time.perf_counter()
        self.graph, self.data, self.config = W.build(self.name, lib, aio=self.aio)
        self.build_s = time.perf_counter() - start
        self.loop = asyncio.new_event_loop() if self.aio else None
        self.loops = 1
        self.wall: list[float] = []
        self.cpu: list[float] = []
        cfg = W.fresh_config(self.config)
        self.chunks, self.nodes = _node_counts(self.graph, self.data, cfg, self.kwargs, self.loop)
        drop_threads(self.graph, [cfg])
        self.sqlite = set_sqlite_synchronous(self.graph, sqlite_synchronous)

    def run_once(self, config: dict) -> int:
        """One run with ``config`` (sync or async as the workload is)."""
        if self.loop is not None:
            return self.loop.run_until_complete(
                consume_async(self.graph, self.data, config, self.kwargs)
            )
        return consume_sync(self.graph, self.data, config, self.kwargs)

    def sample(self, loops: int) -> tuple[float, float]:
        """``(wall, cpu)`` seconds per run, averaged over ``loops`` runs."""
        graph, data, kwargs = self.graph, self.data, self.kwargs
        configs = [W.fresh_config(self.config) for _ in range(loops)]
        gc.collect()
        if self.loop is not None:

            async def go() -> tuple[float, float]:
                c0, t0 = time.process_time(), time.perf_counter()
                for cfg in configs:
                    await consume_async(graph, data, cfg, kwargs)
                return time.perf_counter() - t0, time.process_time() - c0

            wall, cpu = self.loop.run_until_complete(go())
        else:
            c0, t0 = time.process_time(), time.perf_counter()
            for cfg in configs:
                consume_sync(graph, data, cfg, kwargs)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        drop_threads(graph, configs)
        return wall / loops, cpu / loops

    def warm_up(self, runs: int, min_sample: float) -> None:
        """Run ``runs`` times; loop short workloads so a sample lasts ``min_sample`` s."""
        warm = [self.sample(1)[0] for _ in range(max(1, runs))]
        if min(warm) < min_sample:
            self.loops = min(10_000, math.ceil(min_sample / max(min(warm), 1e-6)))

    def measure(self) -> None:
        """Take one sample."""
        wall, cpu = self.sample(self.loops)
        self.wall.append(wall)
        self.cpu.append(cpu)

    def close(self) -> None:
        """Close the event loop of an async workload."""
        if self.loop is not None:
            self.loop.close()
            self.loop = None

    def result(self) -> dict[str, Any]:
        """Every figure of the samples taken (seconds per run)."""
        return {
            "workload": self.name,
            "mode": "async" if self.aio else "sync",
            "loops": self.loops,
            "n": len(self.cpu),
            "build_s": self.build_s,
            "min_s": min(self.wall),
            "median_s": statistics.median(self.wall),
            "cpu_min_s": min(self.cpu),
            "cpu_median_s": statistics.median(self.cpu),
            "cpu_times_s": self.cpu,
            "chunks": self.chunks,
            "node_updates": self.nodes,
            "sqlite": self.sqlite,
        }


def time_workloads(
    lib: str,
    names: Iterable[str],
    rounds: int,
    *,
    min_sample: float = 0.1,
    sqlite_synchronous: str = "native",
    log: Callable[[str], None] = lambda _msg: None,
) -> dict[str, dict[str, Any]]:
    """Build and warm up every workload, then sample them round-robin ``rounds`` times.

    Returns ``{name: Timed.result()}``; a workload that fails gets ``{"error": ...}``.
    """
    results: dict[str, dict[str, Any]] = {}
    live: list[Timed] = []
    for full in names:
        log(f"[{lib}] build + warm up {full}")
        try:
            timed = Timed(lib, full, sqlite_synchronous)
            timed.warm_up(1, min_sample)
            live.append(timed)
        except Exception as exc:  # a missing feature is a result too
            results[full] = {"error": f"{type(exc).__name__}: {exc}"[:500]}
            log(f"  ERROR {results[full]['error']}")
    rng = random.Random(0)
    for rnd in range(rounds):
        order = live[:]
        rng.shuffle(order)
        for timed in order:
            timed.measure()
        log(f"[{lib}] round {rnd + 1}/{rounds} done")
    for timed in live:
        timed.close()
        results[timed.full_name] = timed.result()
    return results
