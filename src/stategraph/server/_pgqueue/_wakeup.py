"""Wake-ups of the PostgreSQL run queue: one ``LISTEN`` connection per queue object.

procrastinate's insert trigger ``NOTIFY``-s the queue's channel when a run is
enqueued; the queue itself notifies the same channel when a run of a thread may have
become runnable (the thread's running run ended with another one waiting, or a
pending run went away). :class:`Listener` keeps one connection
listening, in a background task, and wakes every waiting :meth:`Listener.wait`.

When the connection breaks (a PostgreSQL restart, a network cut) the task reconnects
with backoff and wakes every waiter once it listens again, since notifications sent
while it was away are lost: a waiter then looks at the queue itself (a spurious
wake-up is allowed, a missed one is not).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import psycopg
from psycopg import sql

__all__ = ["Listener"]

log = logging.getLogger("stategraph.server.pgqueue")


class Listener:
    """``LISTEN`` on one channel in a background task; :meth:`wait` until a notify."""

    def __init__(self, dsn: str, channel: str, *, backoff: float = 0.5) -> None:
        self.dsn = dsn
        self.channel = channel
        self.backoff = backoff
        self._waiters: set[asyncio.Future[None]] = set()
        self._task: asyncio.Task[None] | None = None
        self._ready: asyncio.Event | None = None
        self._closed = False
        self.connected = False
        self.wakes = 0
        """How many times waiters were woken: a caller that looked at the queue notes
        it, and does not wait when it changed meanwhile (the wake-up came too early)."""

    def wake(self) -> None:
        """Wake every current waiter."""
        self.wakes += 1
        for fut in self._waiters:
            if not fut.done():
                fut.set_result(None)
        self._waiters.clear()

    async def start(self) -> None:
        """Start listening (idempotent); returns once the first ``LISTEN`` ran or failed."""
        if self._task is None and not self._closed:
            self._ready = asyncio.Event()
            self._task = asyncio.get_running_loop().create_task(self._run())
        if self._ready is not None:
            await self._ready.wait()

    async def wait(self, timeout: float, since: int | None = None) -> None:
        """Until a notification, a reconnect, :meth:`close`, or ``timeout`` seconds;
        at once when there was one after :attr:`wakes` read ``since``."""
        if self._closed or timeout <= 0 or (since is not None and since != self.wakes):
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.add(fut)
        try:
            await asyncio.wait_for(asyncio.shield(fut), timeout)
        except asyncio.TimeoutError:
            pass
        finally:
            self._waiters.discard(fut)

    async def close(self) -> None:
        """Stop listening and wake every waiter."""
        self._closed = True
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self.wake()

    async def _run(self) -> None:
        delay = self.backoff
        while not self._closed:
            try:
                conn: psycopg.AsyncConnection[Any] = await psycopg.AsyncConnection.connect(
                    self.dsn, autocommit=True
                )
            except psycopg.Error as exc:
                self._not_ready()
                log.warning("run queue listener: cannot connect (%s); retrying", exc)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
                continue
            try:
                await conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self.channel)))
                self.connected = True
                delay = self.backoff
                if self._ready is not None:
                    self._ready.set()
                self.wake()  # notifications may have been missed while away
                async for _ in conn.notifies():
                    self.wake()
            except psycopg.Error as exc:
                log.warning("run queue listener: connection lost (%s); reconnecting", exc)
            finally:
                self.connected = False
                with contextlib.suppress(Exception):
                    await conn.close()
            if not self._closed:
                await asyncio.sleep(delay)

    def _not_ready(self) -> None:
        # the first start() returns even when the database is away: waiters then poll
        if self._ready is not None:
            self._ready.set()
