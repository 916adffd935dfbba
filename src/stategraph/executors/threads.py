"""The default executor: tasks run on the caller's threads (or its event loop)."""

from __future__ import annotations

import concurrent.futures
import contextvars
import threading

from stategraph.executors.base import Emit, TaskExecutor, TaskPayload, TaskResult
from stategraph.executors.worker import run_payload, worker_name

__all__ = ["ThreadExecutor"]


class ThreadExecutor(TaskExecutor):
    """Run tasks in the caller's process: what a graph does when no executor is given.

    Inside a run the runtime calls the nodes itself: a step with one task runs on the
    calling thread, several run on a thread pool the run borrows for its duration
    (idle pools are kept for later runs; async runs await async nodes on the event
    loop). ``max_workers`` bounds how many tasks of one
    step run at once (like ``config["max_concurrency"]``; the smaller one wins).

    Outside a run, :meth:`submit` runs a :class:`TaskPayload` on this executor's own
    pool, exactly as a Ray or Dask worker runs it.
    """

    in_process = True
    kind = "threads"

    def __init__(self, max_workers: int | None = None) -> None:
        if max_workers is not None and (
            isinstance(max_workers, bool) or not isinstance(max_workers, int) or max_workers < 1
        ):
            raise ValueError(
                f"ThreadExecutor(max_workers=...) must be a positive integer or None, "
                f"got {max_workers!r}."
            )
        self.max_workers = max_workers
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def submit(
        self, payload: TaskPayload, emit: Emit | None = None
    ) -> concurrent.futures.Future[TaskResult]:
        """Run one attempt on this executor's pool (chunks reach ``emit`` as written)."""
        with self._lock:
            if self._pool is None:
                self._pool = concurrent.futures.ThreadPoolExecutor(
                    max_workers=self.max_workers, thread_name_prefix="stategraph-exec"
                )
            pool = self._pool
        ctx = contextvars.copy_context()
        return pool.submit(ctx.run, run_payload, payload, emit, worker_name(), False)

    def close(self) -> None:
        """Shut the pool down (waits for running attempts)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)

    def __repr__(self) -> str:
        return f"ThreadExecutor(max_workers={self.max_workers!r})"
