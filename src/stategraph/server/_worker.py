"""A worker: claims runs from the queue and executes them, a few at a time.

``stategraph serve`` runs one inside the API process (embedded); ``stategraph worker``
runs one on its own. On shutdown a worker stops claiming, lets its runs finish for a
grace period, then cancels the rest and gives them back to the queue (another worker
continues them from their last checkpoint).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import uuid
from typing import Any

from stategraph.server._context import ServerContext
from stategraph.server._executor import Executor
from stategraph.server._queue import Claim, ClaimLost

__all__ = ["Worker"]

log = logging.getLogger("stategraph.server")


class Worker:
    """Claims and executes runs (see the module docstring)."""

    def __init__(
        self, ctx: ServerContext, *, concurrency: int = 10, worker_id: str | None = None
    ) -> None:
        if concurrency < 1:
            raise ValueError(
                f"A worker needs concurrency >= 1 (runs at a time), got {concurrency}."
            )
        self.ctx = ctx
        self.concurrency = concurrency
        self.worker_id = worker_id or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self.executor = Executor(ctx, self.worker_id)
        self._running: dict[asyncio.Task[None], Claim] = {}
        self._loop_task: asyncio.Task[None] | None = None
        self._stopping = False
        self._slots = asyncio.Semaphore(concurrency)

    def start(self) -> None:
        """Begin claiming runs in the background."""
        self._loop_task = asyncio.ensure_future(self._loop())

    @property
    def busy(self) -> int:
        """How many runs this worker executes now."""
        return len(self._running)

    async def _loop(self) -> None:
        queue = self.ctx.queue
        while not self._stopping:
            await self._slots.acquire()
            if self._stopping:
                self._slots.release()
                return
            begun = None
            try:
                if self.ctx.storage.joined:  # the claim and the run's start: one transaction
                    taken = await queue.claim_with(
                        self.worker_id, self.ctx.lease_seconds, self.executor.begin
                    )
                    claim, begun = (None, None) if taken is None else taken
                else:
                    claim = await queue.claim(self.worker_id, self.ctx.lease_seconds)
            except Exception:
                self._slots.release()
                log.exception("worker %s: claiming failed; retrying", self.worker_id)
                await asyncio.sleep(1.0)
                continue
            if claim is None:
                self._slots.release()
                await queue.wait(1.0)
                continue
            task = asyncio.ensure_future(self._execute(claim, begun))
            self._running[task] = claim

    async def _execute(self, claim: Claim, begun: Any = None) -> None:
        try:
            await self.executor.execute(claim, begun)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("run %s: the executor failed", claim.run.run_id)
            with contextlib.suppress(Exception):
                await self.ctx.queue.release(claim, delay=1.0)
        finally:
            self._running.pop(asyncio.current_task(), None)  # type: ignore[arg-type]
            self._slots.release()

    async def stop(self, grace: float = 10.0) -> None:
        """Stop claiming; wait ``grace`` seconds for running runs, then hand the rest
        back to the queue."""
        self._stopping = True
        if self._loop_task is not None:
            self._loop_task.cancel()
            with contextlib.suppress(BaseException):
                await self._loop_task
        if self._running:
            await asyncio.wait(set(self._running), timeout=grace)
        for task, claim in list(self._running.items()):
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
            with contextlib.suppress(ClaimLost, Exception):
                await self.ctx.queue.release(claim)
