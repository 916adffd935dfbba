"""The rules every :class:`~stategraph.server._queue.RunQueue` backend keeps.

Subclass :class:`QueueContract` in a test module and give it a ``queue`` fixture (an
async fixture yielding a set-up, empty queue); every test below then runs against that
backend. The SQLite queue runs it in ``test_sqlite_queue.py``, the PostgreSQL queue in
``tests/server/pgqueue/``.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import pytest

from stategraph.server._queue import ClaimLost, QueuedRun, RunQueue, ThreadBusy

LEASE = 30.0


def run(thread: str | None = None, strategy: str = "enqueue", **kw: Any) -> QueuedRun:
    """A queued run with a fresh id."""
    return QueuedRun(
        run_id=kw.pop("run_id", str(uuid.uuid4())),
        thread_id=thread,
        assistant_id=kw.pop("assistant_id", "agent"),
        kwargs=kw.pop("kwargs", {"input": {"n": 1}}),
        multitask_strategy=strategy,  # type: ignore[arg-type]
        **kw,
    )


class QueueContract:
    """The queue contract as tests (see the module docstring)."""

    async def test_enqueue_then_claim_hands_back_the_run(self, queue: RunQueue) -> None:
        assert isinstance(queue, RunQueue)
        job = run("t1", kwargs={"input": {"x": [1, "a", None]}, "stream_mode": ["values"]})
        await queue.enqueue(job)
        claim = await queue.claim("w1", LEASE)
        assert claim is not None
        assert claim.run == job
        assert (claim.worker_id, claim.attempt, claim.cancel) == ("w1", 1, None)
        assert claim.expires_at > time.time() + LEASE - 5
        assert await queue.claim("w2", LEASE) is None

    async def test_one_running_run_per_thread_in_enqueue_order(self, queue: RunQueue) -> None:
        a, b, c = run("t1"), run("t1"), run("t2")
        for job in (a, b, c):
            await queue.enqueue(job)
        first = await queue.claim("w", LEASE)
        second = await queue.claim("w", LEASE)
        assert first is not None and second is not None
        assert {first.run.run_id, second.run.run_id} == {a.run_id, c.run_id}
        assert await queue.claim("w", LEASE) is None  # b waits for a
        assert await queue.pending("t1") == [a.run_id, b.run_id]
        await queue.finish(first if first.run.run_id == a.run_id else second, "success")
        third = await queue.claim("w", LEASE)
        assert third is not None and third.run.run_id == b.run_id

    async def test_stateless_runs_run_in_parallel(self, queue: RunQueue) -> None:
        jobs = [run(None) for _ in range(3)]
        for job in jobs:
            await queue.enqueue(job)
        claims = [await queue.claim("w", LEASE) for _ in range(3)]
        assert {c.run.run_id for c in claims if c} == {j.run_id for j in jobs}

    async def test_available_at_delays_and_a_later_run_never_overtakes(
        self, queue: RunQueue
    ) -> None:
        late = run("t1", available_at=time.time() + 0.4)
        after = run("t1")
        await queue.enqueue(late)
        await queue.enqueue(after)
        assert await queue.claim("w", LEASE) is None
        await asyncio.sleep(0.5)
        claim = await queue.claim("w", LEASE)
        assert claim is not None and claim.run.run_id == late.run_id

    async def test_reject_refuses_a_busy_thread_and_enqueues_nothing(self, queue: RunQueue) -> None:
        first = run("t1")
        await queue.enqueue(first)
        with pytest.raises(ThreadBusy) as err:
            await queue.enqueue(run("t1", "reject"))
        assert err.value.run_ids == (first.run_id,) and "t1" in str(err.value)
        assert await queue.pending("t1") == [first.run_id]
        # another thread is free
        await queue.enqueue(run("t2", "reject"))

    async def test_interrupt_asks_the_running_run_and_removes_pending_ones(
        self, queue: RunQueue
    ) -> None:
        a, b = run("t1"), run("t1")
        await queue.enqueue(a)
        await queue.enqueue(b)
        claim = await queue.claim("w", LEASE)
        assert claim is not None and claim.run.run_id == a.run_id
        c = run("t1", "interrupt")
        out = await queue.enqueue(c)
        assert list(out.cancelled) == [a.run_id, b.run_id] and list(out.removed) == [b.run_id]
        beat = await queue.heartbeat(claim, LEASE)
        assert beat.cancel == "interrupt"
        assert await queue.claim("w", LEASE) is None
        await queue.finish(claim, "interrupted")
        nxt = await queue.claim("w", LEASE)
        assert nxt is not None and nxt.run.run_id == c.run_id

    async def test_rollback_request_is_not_downgraded(self, queue: RunQueue) -> None:
        a = run("t1")
        await queue.enqueue(a)
        claim = await queue.claim("w", LEASE)
        assert claim is not None
        await queue.enqueue(run("t1", "rollback"))
        await queue.enqueue(run("t1", "interrupt"))
        assert (await queue.heartbeat(claim, LEASE)).cancel == "rollback"

    async def test_cancel_pending_running_and_absent(self, queue: RunQueue) -> None:
        a, b = run("t1"), run("t2")
        await queue.enqueue(a)
        await queue.enqueue(b)
        claim = await queue.claim("w", LEASE)
        assert claim is not None
        other = b if claim.run.run_id == a.run_id else a
        assert (await queue.cancel(other.run_id, "interrupt")).state == "removed"
        assert (await queue.cancel(claim.run.run_id, "interrupt")).state == "requested"
        assert (await queue.heartbeat(claim, LEASE)).cancel == "interrupt"
        assert (await queue.cancel(str(uuid.uuid4()), "interrupt")).state == "absent"
        await queue.finish(claim, "interrupted")
        assert (await queue.cancel(claim.run.run_id, "rollback")).state == "absent"
        assert await queue.claim("w", LEASE) is None

    async def test_an_expired_claim_is_taken_over_and_the_old_one_is_fenced(
        self, queue: RunQueue
    ) -> None:
        a, b = run("t1"), run("t1")
        await queue.enqueue(a)
        await queue.enqueue(b)
        dead = await queue.claim("w1", 0.2)
        assert dead is not None and dead.run.run_id == a.run_id
        assert await queue.claim("w2", LEASE) is None
        await asyncio.sleep(0.3)
        taken = await queue.claim("w2", LEASE)
        assert taken is not None and taken.run.run_id == a.run_id  # not b: a keeps its place
        assert (taken.attempt, taken.worker_id) == (2, "w2") and taken.token > dead.token
        for stale in (
            queue.heartbeat(dead, LEASE),
            queue.finish(dead, "success"),
            queue.release(dead),
        ):
            with pytest.raises(ClaimLost):
                await stale
        assert await queue.pending("t1") == [a.run_id, b.run_id]
        await queue.finish(taken, "success")
        with pytest.raises(ClaimLost):
            await queue.finish(taken, "success")  # at most once

    async def test_a_cancel_made_before_a_takeover_reaches_the_new_claim(
        self, queue: RunQueue
    ) -> None:
        await queue.enqueue(run("t1"))
        dead = await queue.claim("w1", 0.2)
        assert dead is not None
        await queue.cancel(dead.run.run_id, "rollback")
        await asyncio.sleep(0.3)
        taken = await queue.claim("w2", LEASE)
        assert taken is not None and taken.cancel == "rollback"

    async def test_heartbeat_keeps_the_claim(self, queue: RunQueue) -> None:
        await queue.enqueue(run("t1"))
        claim = await queue.claim("w1", 0.3)
        assert claim is not None
        for _ in range(3):
            await asyncio.sleep(0.15)
            beat = await queue.heartbeat(claim, 0.3)
            assert beat.cancel is None and beat.expires_at > time.time()
        assert await queue.claim("w2", LEASE) is None

    async def test_release_makes_the_run_pending_again(self, queue: RunQueue) -> None:
        a, b = run("t1"), run("t1")
        await queue.enqueue(a)
        await queue.enqueue(b)
        claim = await queue.claim("w", LEASE)
        assert claim is not None
        await queue.release(claim, delay=0.3)
        assert await queue.claim("w", LEASE) is None  # a keeps its place, delayed
        await asyncio.sleep(0.4)
        again = await queue.claim("w", LEASE)
        assert again is not None and again.run.run_id == a.run_id and again.attempt == 2

    async def test_delete_forgets_and_fences(self, queue: RunQueue) -> None:
        a = run("t1")
        await queue.enqueue(a)
        claim = await queue.claim("w", LEASE)
        assert claim is not None
        await queue.delete(a.run_id)
        assert await queue.pending("t1") == []
        with pytest.raises(ClaimLost):
            await queue.heartbeat(claim, LEASE)

    async def test_duplicate_run_id_and_bad_strategy_are_refused(self, queue: RunQueue) -> None:
        a = run("t1")
        await queue.enqueue(a)
        with pytest.raises(ValueError, match=a.run_id):
            await queue.enqueue(run("t2", run_id=a.run_id))
        with pytest.raises(ValueError, match="multitask_strategy"):
            await queue.enqueue(run("t3", "sometimes"))
        assert await queue.pending("t3") == []

    async def test_finish_rejects_an_unknown_status(self, queue: RunQueue) -> None:
        await queue.enqueue(run("t1"))
        claim = await queue.claim("w", LEASE)
        assert claim is not None
        with pytest.raises(ValueError, match="status"):
            await queue.finish(claim, "done")  # type: ignore[arg-type]
        await queue.finish(claim, "success")

    async def test_wait_wakes_on_enqueue(self, queue: RunQueue) -> None:
        async def later() -> None:
            await asyncio.sleep(0.1)
            await queue.enqueue(run("t1"))

        task = asyncio.ensure_future(later())
        start = time.monotonic()
        await queue.wait(5.0)
        assert time.monotonic() - start < 2.0
        await task
        assert await queue.claim("w", LEASE) is not None

    async def test_wait_times_out(self, queue: RunQueue) -> None:
        start = time.monotonic()
        await queue.wait(0.2)
        assert 0.15 < time.monotonic() - start < 2.0

    async def test_cron_tick_fires_once(self, queue: RunQueue) -> None:
        tick = 1_700_000_000.0
        results = await asyncio.gather(*(queue.claim_tick("c1", tick) for _ in range(5)))
        assert results.count(True) == 1
        assert await queue.claim_tick("c1", tick + 60)
        assert await queue.claim_tick("c2", tick)

    async def test_concurrent_claims_hand_each_run_out_once(self, queue: RunQueue) -> None:
        jobs = [run(f"t{i % 4}") for i in range(12)] + [run(None) for _ in range(4)]
        for job in jobs:
            await queue.enqueue(job)
        seen: list[str] = []

        async def worker(name: str) -> None:
            idle = 0
            while idle < 3:
                claim = await queue.claim(name, LEASE)
                if claim is None:
                    idle += 1
                    await asyncio.sleep(0.02)
                    continue
                idle = 0
                seen.append(claim.run.run_id)
                await asyncio.sleep(0.005)
                await queue.finish(claim, "success")

        await asyncio.gather(*(worker(f"w{i}") for i in range(4)))
        assert sorted(seen) == sorted(j.run_id for j in jobs)
