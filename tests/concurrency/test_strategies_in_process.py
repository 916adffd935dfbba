"""Many runs on one thread from Python threads and asyncio tasks, per strategy.

Every saver (in memory, SQLite file, PostgreSQL) and every ``multitask_strategy``:
no fork of the thread, no input lost, each completed run's result exactly the
thread as it left it (see ``lease_helpers.check_outcomes``).
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from lease_helpers import (
    build,
    check_linear_history,
    check_outcomes,
    open_sync_saver,
    run_input,
    segments,
)

from stategraph.errors import LeaseLostError, RunPreempted, ThreadBusyError

KINDS = ["memory", "sqlite", "postgres"]
STRATEGIES = ["reject", "enqueue", "interrupt", "rollback"]
WORKERS = 3
RUNS = 3
# short leases keep preemption quick; long enough for a loaded 2-core CI machine
CONFIG: dict[str, Any] = {"configurable": {"thread_id": "busy"}, "lease_timeout": 1.5}


def _expect(strategy: str, counts: dict[str, int], final: list[str]) -> None:
    total = WORKERS * RUNS
    assert sum(counts.values()) == total
    lost = counts.get("lost", 0)
    assert lost <= 1, counts  # a stall past the lease is rare, never the rule
    if strategy == "enqueue":
        assert counts.get("ok", 0) == total - lost
    else:
        assert counts.get("ok", 0) >= 1
    if strategy in ("enqueue", "interrupt") and not lost:
        # every input is kept, stopped runs included
        assert len(segments(final)) == total


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("kind", KINDS)
def test_threads_on_one_thread_id(kind: str, strategy: str, target_for: Any) -> None:
    with open_sync_saver(kind, target_for(kind)) as saver:
        app = build(saver)
        outcomes: dict[str, tuple[str, Any]] = {}
        start = threading.Barrier(WORKERS)

        def worker(w: int) -> None:
            start.wait()
            for r in range(RUNS):
                msg = f"w{w}r{r}"
                try:
                    out = app.invoke(run_input(msg), CONFIG, multitask_strategy=strategy)
                    outcomes[msg] = ("ok", out["log"])
                except ThreadBusyError:
                    outcomes[msg] = ("busy", None)
                except RunPreempted:
                    outcomes[msg] = ("preempted", None)
                except LeaseLostError:
                    outcomes[msg] = ("lost", None)

        threads = [threading.Thread(target=worker, args=(w,)) for w in range(WORKERS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        final = app.get_state(CONFIG).values.get("log", [])
        counts = check_outcomes(strategy, outcomes, final)
        check_linear_history(saver, "busy")
    _expect(strategy, counts, final)


async def _async_saver(kind: str, target: str) -> tuple[Any, Any]:
    if kind == "memory":
        from stategraph.checkpoint.memory import InMemorySaver

        saver: Any = InMemorySaver()

        async def close() -> None:
            return None

        return saver, close
    if kind == "sqlite":
        import sqlite3

        from stategraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        conn = sqlite3.connect(target, check_same_thread=False, isolation_level=None)
        saver = AsyncSqliteSaver(conn)

        async def close_sqlite() -> None:
            await asyncio.get_running_loop().run_in_executor(None, saver._close)

        return saver, close_sqlite
    from psycopg_pool import AsyncConnectionPool

    from stategraph.checkpoint.postgres.aio import AsyncPostgresSaver

    pool = AsyncConnectionPool(
        target, min_size=1, max_size=8, kwargs={"autocommit": True}, open=False
    )
    await pool.open()
    return AsyncPostgresSaver(pool), pool.close


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("kind", KINDS)
async def test_asyncio_tasks_on_one_thread_id(kind: str, strategy: str, target_for: Any) -> None:
    saver, close = await _async_saver(kind, target_for(kind))
    try:
        app = build(saver, use_async=True)
        outcomes: dict[str, tuple[str, Any]] = {}

        async def worker(w: int) -> None:
            for r in range(RUNS):
                msg = f"w{w}r{r}"
                try:
                    out = await app.ainvoke(run_input(msg), CONFIG, multitask_strategy=strategy)
                    outcomes[msg] = ("ok", out["log"])
                except ThreadBusyError:
                    outcomes[msg] = ("busy", None)
                except RunPreempted:
                    outcomes[msg] = ("preempted", None)
                except LeaseLostError:
                    outcomes[msg] = ("lost", None)

        await asyncio.gather(*(worker(w) for w in range(WORKERS)))
        final = (await app.aget_state(CONFIG)).values.get("log", [])
        counts = check_outcomes(strategy, outcomes, final)
        history = [t async for t in saver.alist({"configurable": {"thread_id": "busy"}})]
        assert history
    finally:
        await close()
    _expect(strategy, counts, final)
