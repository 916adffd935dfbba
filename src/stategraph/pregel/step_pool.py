"""Thread pools for the steps of synchronous runs, kept from one run to the next.

A step with several tasks runs them on a thread pool. Starting its threads costs more
CPU than a short run spends on its own work, so a run borrows an idle pool of the size
it needs, and gives it back when it ends with none of its tasks still running; the
next run of that size reuses the threads. A pool serves one run at a time (a subgraph
running inside a task borrows a pool of its own), so runs never wait for each other's
tasks, and a run's concurrency is exactly that of a pool made for it.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

__all__ = ["StepPool", "borrow", "give_back", "idle_pools"]

_KEEP = 8
"""Idle pools kept at most (the least recently returned ones are shut down)."""

_lock = threading.Lock()
_idle: list[tuple[int, ThreadPoolExecutor]] = []
_pid = os.getpid()


def _forget_after_fork() -> None:
    """A forked child has none of its parent's worker threads: drop their pools."""
    global _lock, _pid
    _lock = threading.Lock()
    _idle.clear()
    _pid = os.getpid()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)


def borrow(workers: int) -> ThreadPoolExecutor:
    """An idle pool of ``workers`` threads (a new one when none is idle)."""
    with _lock:
        for i in range(len(_idle) - 1, -1, -1):
            if _idle[i][0] == workers:
                return _idle.pop(i)[1]
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(max_workers=workers, thread_name_prefix="stategraph")


def give_back(workers: int, pool: ThreadPoolExecutor) -> None:
    """Return a borrowed pool with no task running or queued, for later runs."""
    evicted = None
    with _lock:
        if os.getpid() != _pid:
            evicted = pool
        else:
            _idle.append((workers, pool))
            if len(_idle) > _KEEP:
                evicted = _idle.pop(0)[1]
    if evicted is not None:
        evicted.shutdown(wait=False)


def idle_pools() -> int:
    """How many pools are idle, waiting for a run."""
    with _lock:
        return len(_idle)


class StepPool:
    """The thread pool of one run: borrowed at its first step with several tasks."""

    __slots__ = ("inflight", "pool", "workers")

    def __init__(self) -> None:
        self.pool: ThreadPoolExecutor | None = None
        self.workers = 0
        # tasks submitted whose end the run has not processed yet
        self.inflight = 0

    def get(self, workers: int) -> ThreadPoolExecutor:
        """The run's pool; ``workers`` sizes it when it is borrowed (first call)."""
        pool = self.pool
        if pool is None:
            pool = self.pool = borrow(workers)
            self.workers = workers
        return pool

    def abandon(self) -> None:
        """Leave the pool to its running threads (they cannot be stopped): a step timed
        out. Queued tasks are cancelled; the pool is never reused."""
        pool, self.pool = self.pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        """End of the run: give the pool back when idle, else wait for its tasks (the
        run stopped during a step) and shut it down."""
        pool, self.pool = self.pool, None
        if pool is None:
            return
        if self.inflight == 0:
            give_back(self.workers, pool)
        else:
            pool.shutdown(wait=True)
