"""Publishing what a run streams, and following it from any process.

The executor publishes each event (name and JSON text, numbered from 0 per run). A
process keeps the events of the runs it executes in memory, wakes the clients
following them at once, and writes them to the event log table in small batches (and
all of them when the run ends, followed by an end marker). A client of another process
(``stategraph worker`` executes the run, ``stategraph serve`` answers the client)
follows the table instead. On PostgreSQL each stored batch is announced by a
``NOTIFY`` that carries the events themselves when they fit (``events.notice``): a
follower here takes them from the notification, reading the table only to fill a gap
(it joined late, a batch was too big, the listener reconnected) or, as a fallback,
when nothing came for a while. On SQLite it polls the table. A client that reconnects
gives the number of the last event it saw (``Last-Event-ID``) and gets the rest.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from stategraph.server._records import Records, events, runs

__all__ = ["RunStreams", "END"]

END = "__end__"
"""Name of the marker stored after a run's last event (never sent to clients)."""

_FINAL = ("success", "error", "timeout", "interrupted")


class _Waking:
    """Followers of a run wait on ``changed``, a future resolved at its next event."""

    changed: asyncio.Future[None] | None

    def wake(self) -> None:
        if self.changed is not None and not self.changed.done():
            self.changed.set_result(None)
        self.changed = None

    def waiter(self) -> asyncio.Future[None]:
        if self.changed is None:
            self.changed = asyncio.get_running_loop().create_future()
        return self.changed


@dataclass
class _Live(_Waking):
    events: list[tuple[int, str, str]] = field(default_factory=list)
    flushed: int = 0
    done: bool = False
    changed: asyncio.Future[None] | None = None
    ended_at: float = 0.0


@dataclass
class _Remote(_Waking):
    """Events of a run executed elsewhere, as notifications brought them here (in
    arrival order; every follower of the run here reads them at its own pace)."""

    events: list[tuple[int, str, str]] = field(default_factory=list)
    gaps: int = 0
    """Notices that named the run without its events: followers read the table."""
    followers: int = 0
    since: float = field(default_factory=time.monotonic)
    changed: asyncio.Future[None] | None = None


class RunStreams:
    """The event streams of runs (see the module docstring)."""

    def __init__(
        self,
        records: Records,
        *,
        poll: float = 0.02,
        max_poll: float = 0.25,
        flush_every: float = 0.05,
        keep_live: float = 30.0,
    ) -> None:
        self.records = records
        self.poll = poll
        self.max_poll = max_poll
        self._started: dict[str, asyncio.Event] = {}
        self.notify = getattr(records.db, "dialect", "") == "postgres"
        """Announce stored events with ``NOTIFY`` and follow other processes' runs
        through ``LISTEN`` (PostgreSQL), instead of polling alone."""
        self._listener: Any = None
        self.flush_every = flush_every
        self.keep_live = keep_live
        self._live: dict[str, _Live] = {}
        self._remote: dict[str, _Remote] = {}
        self._swept = 0.0
        self.notice_poll = 1.0
        """Seconds a follower waits for a notice before it reads the table anyway."""
        self._dirty: set[str] = set()
        self._flusher: asyncio.Task[None] | None = None
        self._kick: asyncio.Event | None = None
        self._closed = False

    # -- publishing ---------------------------------------------------------------
    async def open(self, run_id: str, attempt: int) -> int:
        """Start publishing ``run_id``; returns the first sequence number (after what
        an earlier attempt stored, so numbers never repeat)."""
        start = 0
        if attempt > 1:
            stored = await self.records.read(events.read(run_id, -1, 1_000_000))
            stored = [e for e in stored if e[1] != END]
            start = stored[-1][0] + 1 if stored else 0
        self._live[run_id] = _Live()
        waiting = self._started.pop(run_id, None)
        if waiting is not None:
            waiting.set()
        remote = self._remote.get(run_id)
        if remote is not None:  # its follower here switches to the live events
            remote.wake()
        return start

    def publish(self, run_id: str, seq: int, event: str, data: str) -> None:
        """Add one event (``data`` is JSON text) and wake its followers."""
        live = self._live.get(run_id)
        if live is None or live.done:
            return
        live.events.append((seq, event, data))
        live.wake()
        self._dirty.add(run_id)
        self._ensure_flusher()

    def seal(self, run_id: str, seq: int) -> list[tuple[int, str, str]]:
        """End the run's stream without waking its followers yet; returns the events
        still to store (with the end marker), for the caller's own transaction. Call
        :meth:`wake` after that transaction committed."""
        live = self._live.get(run_id)
        if live is None:
            return []
        live.events.append((seq, END, "null"))
        live.done = True
        live.ended_at = time.monotonic()
        self._dirty.discard(run_id)
        batch = live.events[live.flushed :]
        live.flushed += len(batch)
        return batch

    def wake(self, run_id: str) -> None:
        """Wake the followers of a sealed run."""
        live = self._live.get(run_id)
        if live is not None:
            live.wake()
        self._forget_old()

    async def _flush_one(self, run_id: str, live: _Live) -> None:
        batch = live.events[live.flushed :]
        if not batch:
            return
        live.flushed += len(batch)
        await self.records.run(events.append(run_id, batch, notify=self.notify))

    def _ensure_flusher(self) -> None:
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.ensure_future(self._flush_loop())

    async def _flush_loop(self) -> None:
        while self._dirty and not self._closed:
            await asyncio.sleep(self.flush_every)
            dirty, self._dirty = self._dirty, set()
            for run_id in dirty:
                live = self._live.get(run_id)
                if live is not None and not live.done:
                    with contextlib.suppress(Exception):
                        await self._flush_one(run_id, live)

    def _forget_old(self) -> None:
        now = time.monotonic()
        for run_id in [
            r
            for r, live in self._live.items()
            if live.done and now - live.ended_at > self.keep_live
        ]:
            del self._live[run_id]
        # runs expected here whose follower never came (its client left first)
        for run_id in [
            r
            for r, remote in self._remote.items()
            if remote.followers <= 0 and now - remote.since > self.keep_live
        ]:
            del self._remote[run_id]

    def forget(self, run_id: str) -> None:
        """Drop a run's in-memory events (a deleted run)."""
        live = self._live.pop(run_id, None)
        if live is not None:
            live.done = True
            live.wake()

    # -- following ----------------------------------------------------------------
    def expect(self, run_id: str) -> None:
        """A client here is about to follow ``run_id`` (just queued): keep the events
        that notifications bring from now on, so the follower needs no read at all."""
        if self.notify and run_id not in self._remote:
            self._remote[run_id] = _Remote()
            now = time.monotonic()
            if now - self._swept > 1.0:
                self._swept = now
                self._forget_old()

    async def follow(
        self, run_id: str, after: int = -1, *, stop: Any = None, fresh: bool = False
    ) -> AsyncIterator[tuple[int, str, str]]:
        """The run's events after number ``after``, live, until its end marker.

        A run this process executes is followed in memory. Otherwise the event table
        is polled, every ``poll`` seconds at first, backing off to ``max_poll`` while
        nothing comes; a run that starts here meanwhile wakes the follower at once.
        ``stop()`` (optional) is asked between polls: ``True`` ends the stream early."""
        try:
            async for item in self._follow(run_id, after, stop, fresh):
                yield item
        finally:
            waiting = self._started.get(run_id)
            if waiting is not None and not waiting.is_set():
                self._started.pop(run_id, None)

    def _notified(self, payload: str) -> None:
        try:
            run_id, rows = events.parse_notice(payload)
        except ValueError:  # not ours: ignore
            return
        remote = self._remote.get(run_id)
        if remote is not None:
            if rows is None:
                remote.gaps += 1
            else:
                remote.events.extend(rows)
            remote.wake()
        waiting = self._started.get(run_id)
        if waiting is not None:
            waiting.set()

    async def _ensure_listener(self) -> None:
        if self.notify and self._listener is None:
            db: Any = self.records.db  # PostgresDb: the only one with notifications
            self._listener = await db.listen(events.CHANNEL, self._notified)

    async def _stored(
        self, run_id: str, after: int
    ) -> tuple[list[tuple[int, str, str]], int, bool]:
        """The events stored for ``run_id`` after ``after`` up to its end marker, the
        number of the last of them (``after`` when there are none), and whether the end
        marker was among them (a follower stops there)."""
        rows = await self.records.read(events.read(run_id, after))
        ended = False
        for i, (seq, event, _) in enumerate(rows):
            if event == END:
                rows, ended = rows[:i], True
                break
            after = seq
        return rows, after, ended

    async def _follow(
        self, run_id: str, after: int, stop: Any, fresh: bool
    ) -> AsyncIterator[tuple[int, str, str]]:
        await self._ensure_listener()
        live = self._live.get(run_id)
        if live is None and self.notify and self._listener is not None:
            async for item in self._follow_notified(run_id, after, stop, fresh):
                yield item
            return
        delay = self.poll
        polls = 0
        while True:
            live = self._live.get(run_id)
            if live is not None:
                async for item in self._follow_live(live, after):
                    after = item[0]
                    yield item
                return
            if fresh:  # just created here: nothing stored yet, wait for it to start
                fresh = False
                started = self._started.setdefault(run_id, asyncio.Event())
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(started.wait(), self.max_poll)
                continue
            rows, after, ended = await self._stored(run_id, after)
            for item in rows:
                yield item
            if ended:
                return
            if rows:
                delay = self.poll
                continue
            if stop is not None and stop():
                return
            polls += 1
            if polls == 1 or polls % 5 == 0:
                status, _ = await self.records.read(runs.result(run_id))
                if status is None:
                    return  # deleted, or never existed
                if status in _FINAL:
                    # finished: read once more (its end marker may have landed meanwhile)
                    tail, _, _ = await self._stored(run_id, after)
                    for item in tail:
                        yield item
                    return
            started = self._started.setdefault(run_id, asyncio.Event())
            try:
                await asyncio.wait_for(started.wait(), delay)
            except asyncio.TimeoutError:
                delay = min(delay * 1.5, self.max_poll)
            finally:
                if started.is_set():
                    self._started.pop(run_id, None)

    async def _follow_notified(
        self, run_id: str, after: int, stop: Any, fresh: bool
    ) -> AsyncIterator[tuple[int, str, str]]:
        """Follow a run of another process from its notices (PostgreSQL).

        Events come in order, numbered without holes (a later attempt goes on after
        what the earlier one stored), so a notice whose first event is not the next
        number means something was missed: the table is read from the last event seen.
        It is also read when the follower joins (unless the run was ``expect``-ed here
        before it was queued, so every notice was kept), and when no notice came for
        :attr:`notice_poll` seconds (with the run's status: a finished run ends)."""
        remote = self._remote.get(run_id)
        if remote is None:
            remote = self._remote[run_id] = _Remote()
            fresh = False  # notices before now were not kept: read what is stored
        remote.followers += 1
        index, gaps = 0, remote.gaps  # where this follower is in the notices
        try:
            read, final = not fresh, False
            while True:
                live = self._live.get(run_id)
                if live is not None:  # it runs here after all
                    async for item in self._follow_live(live, after):
                        after = item[0]
                        yield item
                    return
                if read or remote.gaps != gaps:
                    read, gaps = False, remote.gaps
                    stored, after, ended = await self._stored(run_id, after)
                    for item in stored:
                        yield item
                    if ended:
                        return
                    just_read = True
                else:
                    just_read = False
                while index < len(remote.events):
                    seq, event, data = remote.events[index]
                    if seq > after + 1 and not just_read:
                        read = True  # missed some (a notice lost or too big): read them
                        break
                    index += 1
                    if seq <= after:
                        continue
                    if event == END:
                        return
                    after = seq
                    yield seq, event, data
                if read:
                    continue
                if final or (stop is not None and stop()):
                    return
                try:
                    await asyncio.wait_for(asyncio.shield(remote.waiter()), self.notice_poll)
                except asyncio.TimeoutError:
                    status, _ = await self.records.read(runs.result(run_id))
                    if status is None:
                        return  # deleted, or never existed
                    # a notice may have been lost (the listener reconnected): read; a
                    # finished run's events are all stored with its status
                    read, final = True, status in _FINAL
        finally:
            remote.followers -= 1
            if remote.followers <= 0:
                self._remote.pop(run_id, None)

    async def _follow_live(self, live: _Live, after: int) -> AsyncIterator[tuple[int, str, str]]:
        index = 0
        while True:
            while index < len(live.events):
                seq, event, data = live.events[index]
                index += 1
                if seq <= after:
                    continue
                if event == END:
                    return
                yield seq, event, data
            if live.done:
                return
            await live.waiter()

    def is_live(self, run_id: str) -> bool:
        """Whether this process executes ``run_id`` now."""
        live = self._live.get(run_id)
        return live is not None and not live.done

    async def aclose(self) -> None:
        """Stop the flusher (after a last flush) and the listener."""
        self._closed = True
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(BaseException):
                await self._listener
        for run_id, live in list(self._live.items()):
            with contextlib.suppress(Exception):
                await self._flush_one(run_id, live)
        if self._flusher is not None:
            self._flusher.cancel()
            with contextlib.suppress(BaseException):
                await self._flusher
