"""The embedded SQLite run queue keeps the queue contract, also across processes."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from tests.server.queue_contract import LEASE, QueueContract, run

from stategraph.server._sqlite_queue import SqliteRunQueue

pytestmark = pytest.mark.server


@pytest.fixture
async def queue(tmp_path: Path) -> AsyncIterator[SqliteRunQueue]:
    q = SqliteRunQueue(tmp_path / "queue.sqlite", poll=0.02)
    await q.setup()
    yield q
    await q.aclose()


class TestSqliteQueue(QueueContract):
    pass


async def test_runs_survive_a_new_queue_object(tmp_path: Path) -> None:
    path = tmp_path / "q.sqlite"
    first = SqliteRunQueue(path)
    await first.setup()
    job = run("t1")
    await first.enqueue(job)
    await first.aclose()
    second = SqliteRunQueue(path)
    await second.setup()
    claim = await second.claim("w", LEASE)
    assert claim is not None and claim.run == job
    await second.aclose()


async def test_wait_wakes_on_another_process_commit(tmp_path: Path) -> None:
    path = tmp_path / "q.sqlite"
    queue = SqliteRunQueue(path, poll=0.02)
    await queue.setup()
    script = textwrap.dedent(
        f"""
        import asyncio, time
        from stategraph.server._sqlite_queue import SqliteRunQueue
        from stategraph.server._queue import QueuedRun
        async def main():
            q = SqliteRunQueue({str(path)!r})
            await q.setup()
            time.sleep(0.3)
            await q.enqueue(QueuedRun("r-other", "t9", "agent", {{}}))
            await q.aclose()
        asyncio.run(main())
        """
    )
    proc = await asyncio.create_subprocess_exec(sys.executable, "-c", script)
    try:
        for _ in range(100):
            await queue.wait(10.0)
            claim = await queue.claim("w", LEASE)
            if claim is not None:
                break
        assert claim is not None and claim.run.run_id == "r-other"
    finally:
        assert await proc.wait() == 0
        await queue.aclose()


def test_two_processes_claim_each_run_once(tmp_path: Path) -> None:
    path = tmp_path / "q.sqlite"
    n = 40

    async def fill() -> None:
        q = SqliteRunQueue(path)
        await q.setup()
        for i in range(n):
            await q.enqueue(run(f"t{i % 5}", run_id=f"r{i}"))
        await q.aclose()

    asyncio.run(fill())
    script = textwrap.dedent(
        f"""
        import asyncio
        from stategraph.server._sqlite_queue import SqliteRunQueue
        async def main():
            q = SqliteRunQueue({str(path)!r})
            idle = 0
            while idle < 20:
                c = await q.claim("w", 30)
                if c is None:
                    idle += 1
                    await asyncio.sleep(0.01)
                    continue
                idle = 0
                print(c.run.run_id, flush=True)
                await q.finish(c, "success")
            await q.aclose()
        asyncio.run(main())
        """
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=60)[0].split() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    claimed = outs[0] + outs[1]
    assert sorted(claimed) == sorted(f"r{i}" for i in range(n))
