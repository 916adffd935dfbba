"""Thread pools for the steps of synchronous runs, kept from one run to the next.

A step with several tasks runs them on a thread pool. Starting its threads costs more
CPU than a short run spends on its own work, so a run borrows an idle pool of the size
it needs, and gives it back when it ends with none of its tasks still running; the
next run of that size reuses the threads. A pool serves one run at a time (a subgraph
running inside a task borrows a pool of its own), so runs never wait for each other's
tasks, and a run's concurrency is exactly that of a pool made for it.

Two rules keep a pool that is handed back a pool that works:

* The module holds a strong reference to every pool it lends. A run abandoned part-way
  (a stream dropped unread) may be freed by the cyclic garbage collector, which can
  clear weak references before it finalizes the run: a pool only the run referred to
  would then lose its threads (``ThreadPoolExecutor`` workers exit when their executor
  is collected) before the run's ``finally`` gives it back, and the next run would
  submit to a pool with no thread. Lent pools are reachable from here, so that cannot
  happen.
* A pool is checked before it is kept or reused: one that was shut down, or one whose
  threads have died, is dropped, never lent.

A finalizer may run on any thread (the collector runs wherever an allocation triggers
it), so a run closed by the garbage collector never waits for its pool's threads: it
shuts the pool down without waiting. A run closed by its caller (``stream.close()``, or
the last reference dropped) waits for its running tasks as before.
"""

from __future__ import annotations

import gc
import os
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

__all__ = ["StepPool", "borrow", "give_back", "idle_pools", "collecting", "lent_pools", "retire"]

_KEEP = 8
"""Idle pools kept at most (the least recently returned ones are shut down)."""

_lock = threading.Lock()
_idle: list[tuple[int, ThreadPoolExecutor]] = []
_lent: dict[int, ThreadPoolExecutor] = {}
"""Pools lent to runs, by ``id``: strong references the collector cannot clear."""
_pid = os.getpid()


def _forget_after_fork() -> None:
    """A forked child has none of its parent's worker threads: drop their pools."""
    global _lock, _pid
    _lock = threading.Lock()
    _idle.clear()
    _lent.clear()
    _pid = os.getpid()


_collector = threading.local()


def _note_collection(phase: str, info: dict[str, int]) -> None:
    _collector.active = phase == "start"


gc.callbacks.append(_note_collection)


def collecting() -> bool:
    """Whether the current thread is inside a run of the cyclic garbage collector
    (finalizers of cyclic garbage run there, on whichever thread triggered it)."""
    return getattr(_collector, "active", False)


def _usable(pool: ThreadPoolExecutor) -> bool:
    """Whether ``pool`` can run a task submitted to it: not shut down, and every
    thread it started still alive (a pool counts its idle threads; a dead one counted
    as idle would leave a submitted task waiting for ever)."""
    if getattr(pool, "_shutdown", False) or getattr(pool, "_broken", False):
        return False
    threads = getattr(pool, "_threads", ())
    return all(t.is_alive() for t in threads)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)


def borrow(workers: int) -> ThreadPoolExecutor:
    """An idle pool of ``workers`` threads (a new one when none is idle)."""
    broken: list[ThreadPoolExecutor] = []
    pool = None
    with _lock:
        for i in range(len(_idle) - 1, -1, -1):
            if _idle[i][0] == workers:
                candidate = _idle.pop(i)[1]
                if _usable(candidate):
                    pool = candidate
                    break
                broken.append(candidate)
        if pool is not None:
            _lent[id(pool)] = pool
    for dead in broken:
        dead.shutdown(wait=False, cancel_futures=True)
    if pool is not None:
        return pool
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="stategraph")
    with _lock:
        _lent[id(pool)] = pool
    return pool


def give_back(workers: int, pool: ThreadPoolExecutor) -> None:
    """Return a borrowed pool with no task running or queued, for later runs."""
    evicted = None
    with _lock:
        _lent.pop(id(pool), None)
        if os.getpid() != _pid or not _usable(pool):
            evicted = pool
        else:
            _idle.append((workers, pool))
            if len(_idle) > _KEEP:
                evicted = _idle.pop(0)[1]
    if evicted is not None:
        evicted.shutdown(wait=False, cancel_futures=True)


def retire(pool: ThreadPoolExecutor, *, wait: bool) -> None:
    """Shut a borrowed pool down for good (its tasks are still running, or it timed
    out); with ``wait`` the running tasks finish first."""
    with _lock:
        _lent.pop(id(pool), None)
    pool.shutdown(wait=wait, cancel_futures=not wait)


def idle_pools() -> int:
    """How many pools are idle, waiting for a run."""
    with _lock:
        return len(_idle)


def lent_pools() -> int:
    """How many pools are lent to runs that have not given them back."""
    with _lock:
        return len(_lent)


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
            retire(pool, wait=False)

    def close(self, *, wait: bool = True) -> None:
        """End of the run: give the pool back when idle, else shut it down (the run
        stopped during a step), waiting for its tasks when ``wait``.

        Never waits when called by the garbage collector (a dropped run finalized on
        whichever thread the collection ran) or from one of the pool's own threads:
        waiting there could stall an unrelated run, or a thread could join itself."""
        pool, self.pool = self.pool, None
        if pool is None:
            return
        if self.inflight == 0:
            give_back(self.workers, pool)
        else:
            retire(pool, wait=wait and not collecting() and not _is_worker_of(pool))


def _is_worker_of(pool: ThreadPoolExecutor) -> bool:
    """Whether the current thread is one of ``pool``'s workers (it must not wait for
    the pool: it would wait for itself)."""
    return threading.current_thread() in getattr(pool, "_threads", ())
