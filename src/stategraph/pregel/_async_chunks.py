"""The queue between an async run's stream sink and the async shell that yields chunks.

``asyncio.Queue`` does more than this needs (sizes, putters, ``join()`` bookkeeping on
every put and get) and lets its reader take one item per wake-up. Here the shell drains
everything that arrived at once, and waits only when it has nothing to yield.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from typing import Any

__all__ = ["ChunkQueue"]


class ChunkQueue:
    """Stream chunks of one async run, in the order they were produced.

    Created on the event loop that drives the run. :meth:`put` may be called from any
    thread (a synchronous node runs in a worker thread): off the loop's thread it hands
    the chunk to the loop, which appends it in the order the calls reach it.
    """

    __slots__ = ("_loop", "_thread", "_waiter", "items")

    def __init__(self) -> None:
        self.items: deque[Any] = deque()
        """``(ns, mode, payload)`` chunks not yet taken by the shell (``popleft()`` them)."""
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        self._waiter: asyncio.Future[None] | None = None

    def put(self, ns: tuple[str, ...], mode: str, payload: Any) -> None:
        """Add one chunk (from any thread) and wake the shell if it waits for one.

        The run's stream sink: same arguments as ``RunContext.sink``.
        """
        if threading.get_ident() != self._thread:
            self._loop.call_soon_threadsafe(self.put, ns, mode, payload)
            return
        self.items.append((ns, mode, payload))
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    def arrived(self) -> asyncio.Future[None]:
        """A future done once a chunk is waiting (already done if one is).

        Only the shell waits, one future at a time; a future it no longer needs is
        dropped with :meth:`forget`.
        """
        waiter = self._loop.create_future()
        if self.items:
            waiter.set_result(None)
        else:
            self._waiter = waiter
        return waiter

    def forget(self, waiter: asyncio.Future[None]) -> None:
        """Stop waiting with ``waiter`` (returned by :meth:`arrived`)."""
        if self._waiter is waiter:
            self._waiter = None
        waiter.cancel()
