"""The async transport of the built-in client: the blocking exchange on a thread.

Each call runs its :class:`~stategraph.remote._http.Exchange` on a thread of its own
and hands results to the event loop. A run stream's reader thread fills a queue of at
most ``limits.queue_size`` events and then waits, so a slow consumer holds the server
back (through TCP) instead of filling memory. When the awaiting task is cancelled (or
the consumer stops iterating), the exchange is aborted (its socket shut down, which
wakes the blocked read) and the thread is awaited before the cancellation goes on, so
neither a thread nor a socket outlives the call.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

from stategraph.remote._http import Exchange, SyncTransport
from stategraph.remote._sse import StreamPart
from stategraph.remote._wire import Request

__all__ = ["AsyncTransport"]

_JOIN_SECONDS = 5.0
"""How long a cancelled call waits for its aborted thread (it ends within
milliseconds, unless it is still connecting: then within timeouts.connect)."""

_POLL_SECONDS = 0.5
"""How often a reader blocked on a full queue checks whether its consumer left."""


class _Handoff:
    """Results crossing from one worker thread to the event loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self.finished = loop.create_future()

    def put(self, kind: str, value: Any) -> None:
        """Send ``(kind, value)`` to the loop (dropped if the loop has closed)."""
        try:
            self.loop.call_soon_threadsafe(self.queue.put_nowait, (kind, value))
        except RuntimeError:
            pass  # the loop is closed: nobody is waiting any more

    def done(self) -> None:
        """Mark the worker finished (it has closed its connection)."""

        def settle() -> None:
            if not self.finished.done():
                self.finished.set_result(None)

        try:
            self.loop.call_soon_threadsafe(settle)
        except RuntimeError:
            pass

    async def wait_finished(self, thread: threading.Thread) -> None:
        """Wait (bounded) for the worker thread to end, without blocking the loop."""
        try:
            await asyncio.wait_for(asyncio.shield(self.finished), _JOIN_SECONDS)
        except asyncio.TimeoutError:
            return  # still connecting: it closes its socket once connect returns
        while thread.is_alive():  # it has closed its socket and is returning
            await asyncio.sleep(0.001)


def _start(name: str, work: Callable[[], None]) -> threading.Thread:
    thread = threading.Thread(target=work, name=f"stategraph-remote {name}", daemon=True)
    thread.start()
    return thread


async def _call(exchange: Exchange) -> Any:
    """``exchange.json()`` on a worker thread; cancelling aborts it."""
    handoff = _Handoff(asyncio.get_running_loop())

    def work() -> None:
        try:
            handoff.put("value", exchange.json())
        except BaseException as exc:  # handed to the awaiting task
            handoff.put("error", exc)
        finally:
            handoff.done()

    thread = _start(exchange.where, work)
    try:
        kind, value = await handoff.queue.get()
    except asyncio.CancelledError:
        exchange.abort()
        await handoff.wait_finished(thread)
        raise
    if kind == "error":
        raise value
    return value


async def _stream(exchange: Exchange, size: int) -> AsyncIterator[StreamPart]:
    """``exchange.events()`` read on a worker thread, at most ``size`` events ahead."""
    handoff = _Handoff(asyncio.get_running_loop())
    slots = threading.Semaphore(size)
    stop = threading.Event()

    def work() -> None:
        try:
            for part in exchange.events():
                while not slots.acquire(timeout=_POLL_SECONDS):
                    if stop.is_set() or handoff.loop.is_closed():
                        return
                if stop.is_set():
                    return
                handoff.put("item", part)
            handoff.put("end", None)
        except BaseException as exc:  # handed to the consumer
            handoff.put("error", exc)
        finally:
            exchange.close()
            handoff.done()

    thread = _start(exchange.where, work)
    try:
        while True:
            kind, value = await handoff.queue.get()
            if kind == "item":
                slots.release()
                yield value
            elif kind == "error":
                raise value
            else:
                return
    finally:
        stop.set()
        slots.release()  # wake a reader waiting for room
        exchange.abort()
        await handoff.wait_finished(thread)


class AsyncTransport:
    """The async transport: the blocking one's exchanges, run on worker threads."""

    def __init__(self, sync: SyncTransport) -> None:
        self.sync = sync

    async def json(self, req: Request) -> Any:
        """The decoded JSON answer to ``req``."""
        return await _call(self.sync.exchange(req))

    def events(self, req: Request) -> AsyncIterator[StreamPart]:
        """The events of the run stream ``req`` opens (opened on first iteration)."""
        return _stream(self.sync.exchange(req), self.sync.limits.queue_size)
