"""The embedded run queue: :class:`~stategraph.server._queue.RunQueue` on a SQLite file.

One table holds the runs not yet finished (``sg_run_queue``), one the cron ticks
already fired (``sg_cron_ticks``). Every operation is one ``BEGIN IMMEDIATE``
transaction, so several processes on one machine (``stategraph serve`` and
``stategraph worker`` sharing a data directory) can share the file. Wake-ups: an
in-process event for this object's own changes, and ``PRAGMA data_version`` (which
moves when another connection commits) polled every ``poll`` seconds for the others.

The connection lives on one private thread; coroutines hand it work through
``run_in_executor``, so the event loop never waits for a file lock.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from stategraph.server._db import SqliteThread
from stategraph.server._queue import (
    CANCEL_ACTIONS,
    FINAL_STATUSES,
    MULTITASK_STRATEGIES,
    Beat,
    CancelAction,
    CancelOutcome,
    Claim,
    ClaimLost,
    Enqueued,
    FinalStatus,
    QueuedRun,
    ThreadBusy,
)

__all__ = ["SqliteRunQueue"]

T = TypeVar("T")

_DDL = (
    """CREATE TABLE IF NOT EXISTS sg_run_queue (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id TEXT NOT NULL UNIQUE,
        thread_id TEXT,
        assistant_id TEXT NOT NULL,
        kwargs TEXT NOT NULL,
        strategy TEXT NOT NULL,
        available_at REAL NOT NULL,
        state TEXT NOT NULL DEFAULT 'pending',
        worker_id TEXT,
        attempt INTEGER NOT NULL DEFAULT 0,
        token INTEGER NOT NULL DEFAULT 0,
        expires_at REAL NOT NULL DEFAULT 0,
        cancel TEXT
    )""",
    "CREATE INDEX IF NOT EXISTS sg_run_queue_thread ON sg_run_queue (thread_id, seq)",
    "CREATE INDEX IF NOT EXISTS sg_run_queue_ready ON sg_run_queue (available_at, seq)",
    """CREATE TABLE IF NOT EXISTS sg_cron_ticks (
        cron_id TEXT NOT NULL,
        tick REAL NOT NULL,
        fired_at REAL NOT NULL,
        PRIMARY KEY (cron_id, tick)
    )""",
)

_COLS = "seq, run_id, thread_id, assistant_id, kwargs, strategy, available_at, state, attempt, token, cancel"

# the first run of each thread (or a threadless run) that is runnable now
_CLAIMABLE = f"""
SELECT {_COLS} FROM sg_run_queue q
WHERE ((q.state = 'pending' AND q.available_at <= ?) OR (q.state = 'running' AND q.expires_at < ?))
  AND (q.thread_id IS NULL OR NOT EXISTS (
        SELECT 1 FROM sg_run_queue o WHERE o.thread_id = q.thread_id AND o.seq < q.seq))
ORDER BY q.available_at, q.seq
LIMIT 1
"""


def _run_of(row: Sequence[Any]) -> QueuedRun:
    return QueuedRun(
        run_id=row[1],
        thread_id=row[2],
        assistant_id=row[3],
        kwargs=json.loads(row[4]),
        multitask_strategy=row[5],
        available_at=row[6],
    )


class SqliteRunQueue(SqliteThread):
    """The durable run queue in a SQLite file (see the module docstring)."""

    def __init__(self, path: str | Path, *, poll: float = 0.05) -> None:
        super().__init__(path, "sg-queue")
        self.poll = poll
        self._event: asyncio.Event | None = None
        self._version: int | None = None
        self._closed = False

    # -- plumbing ---------------------------------------------------------------
    async def _call(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        if self._closed:
            raise RuntimeError(f"The run queue at {self.path} is closed.")
        return await self._on_thread(self._tx, fn)

    def _tx(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        conn = self._connect()
        conn.execute("BEGIN IMMEDIATE")
        try:
            out = fn(conn)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return out

    def _wake(self) -> None:
        if self._event is not None:
            self._event.set()

    # -- RunQueue -----------------------------------------------------------------
    async def setup(self) -> None:
        """Create the tables (idempotent)."""

        def ddl(conn: sqlite3.Connection) -> None:
            for stmt in _DDL:
                conn.execute(stmt)

        await self._call(ddl)

    async def aclose(self) -> None:
        """Close the connection and wake every waiter."""
        if self._closed:
            return
        self._closed = True
        self._wake()
        await self._close_connection()

    async def enqueue(self, run: QueuedRun) -> Enqueued:
        """Add a run, applying its multitask strategy in the same transaction."""
        if run.multitask_strategy not in MULTITASK_STRATEGIES:
            raise ValueError(
                f"Unknown multitask_strategy {run.multitask_strategy!r}: use one of "
                f"{', '.join(MULTITASK_STRATEGIES)}."
            )
        kwargs = json.dumps(dict(run.kwargs), separators=(",", ":"))

        def op(conn: sqlite3.Connection) -> Enqueued:
            if conn.execute(
                "SELECT 1 FROM sg_run_queue WHERE run_id = ?", (run.run_id,)
            ).fetchone():
                raise ValueError(f"Run '{run.run_id}' is already in the queue.")
            cancelled: list[str] = []
            removed: list[str] = []
            if run.thread_id is not None:
                rows = conn.execute(
                    "SELECT run_id, state, cancel FROM sg_run_queue WHERE thread_id = ? ORDER BY seq",
                    (run.thread_id,),
                ).fetchall()
                if rows and run.multitask_strategy == "reject":
                    raise ThreadBusy(run.thread_id, [r[0] for r in rows])
                if run.multitask_strategy in CANCEL_ACTIONS:
                    for run_id, state, cancel in rows:
                        cancelled.append(run_id)
                        if state == "pending":
                            removed.append(run_id)
                            conn.execute("DELETE FROM sg_run_queue WHERE run_id = ?", (run_id,))
                        elif cancel != "rollback":
                            conn.execute(
                                "UPDATE sg_run_queue SET cancel = ? WHERE run_id = ?",
                                (run.multitask_strategy, run_id),
                            )
            conn.execute(
                "INSERT INTO sg_run_queue (run_id, thread_id, assistant_id, kwargs, strategy,"
                " available_at) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    run.run_id,
                    run.thread_id,
                    run.assistant_id,
                    kwargs,
                    run.multitask_strategy,
                    float(run.available_at),
                ),
            )
            return Enqueued(tuple(cancelled), tuple(removed))

        out = await self._call(op)
        self._wake()
        return out

    async def claim(self, worker_id: str, lease_seconds: float) -> Claim | None:
        """Claim the next runnable run (see :meth:`RunQueue.claim`)."""

        def op(conn: sqlite3.Connection) -> Claim | None:
            now = time.time()
            row = conn.execute(_CLAIMABLE, (now, now)).fetchone()
            if row is None:
                return None
            attempt, token = row[8] + 1, row[9] + 1
            expires = now + lease_seconds
            conn.execute(
                "UPDATE sg_run_queue SET state = 'running', worker_id = ?, attempt = ?,"
                " token = ?, expires_at = ? WHERE seq = ?",
                (worker_id, attempt, token, expires, row[0]),
            )
            return Claim(_run_of(row), worker_id, attempt, token, expires, row[10])

        return await self._call(op)

    async def heartbeat(self, claim: Claim, lease_seconds: float) -> Beat:
        """Extend the claim; report a cancel request."""

        def op(conn: sqlite3.Connection) -> Beat:
            now = time.time()
            row = conn.execute(
                "SELECT cancel FROM sg_run_queue WHERE run_id = ? AND token = ? AND state = 'running'",
                (claim.run.run_id, claim.token),
            ).fetchone()
            if row is None:
                raise ClaimLost(claim.run.run_id, claim.token, _lost_why(conn, claim))
            expires = now + lease_seconds
            conn.execute(
                "UPDATE sg_run_queue SET expires_at = ? WHERE run_id = ?",
                (expires, claim.run.run_id),
            )
            return Beat(expires, row[0])

        return await self._call(op)

    async def finish(self, claim: Claim, status: FinalStatus) -> None:
        """Remove the run for good."""
        if status not in FINAL_STATUSES:
            raise ValueError(
                f"Unknown final status {status!r}: use one of {', '.join(FINAL_STATUSES)}."
            )

        def op(conn: sqlite3.Connection) -> None:
            cur = conn.execute(
                "DELETE FROM sg_run_queue WHERE run_id = ? AND token = ? AND state = 'running'",
                (claim.run.run_id, claim.token),
            )
            if cur.rowcount == 0:
                raise ClaimLost(claim.run.run_id, claim.token, _lost_why(conn, claim))

        await self._call(op)
        self._wake()

    async def release(self, claim: Claim, delay: float = 0.0) -> None:
        """Make the run pending again (keeping its place in its thread)."""

        def op(conn: sqlite3.Connection) -> None:
            cur = conn.execute(
                "UPDATE sg_run_queue SET state = 'pending', worker_id = NULL, expires_at = 0,"
                " available_at = ? WHERE run_id = ? AND token = ? AND state = 'running'",
                (time.time() + max(0.0, delay), claim.run.run_id, claim.token),
            )
            if cur.rowcount == 0:
                raise ClaimLost(claim.run.run_id, claim.token, _lost_why(conn, claim))

        await self._call(op)
        self._wake()

    async def cancel(self, run_id: str, action: CancelAction) -> CancelOutcome:
        """Remove a pending run, or ask a running one to stop."""
        if action not in CANCEL_ACTIONS:
            raise ValueError(f"Unknown cancel action {action!r}: use 'interrupt' or 'rollback'.")

        def op(conn: sqlite3.Connection) -> CancelOutcome:
            row = conn.execute(
                "SELECT state, cancel FROM sg_run_queue WHERE run_id = ?", (run_id,)
            ).fetchone()
            if row is None:
                return CancelOutcome("absent")
            if row[0] == "pending":
                conn.execute("DELETE FROM sg_run_queue WHERE run_id = ?", (run_id,))
                return CancelOutcome("removed")
            if row[1] != "rollback":
                conn.execute(
                    "UPDATE sg_run_queue SET cancel = ? WHERE run_id = ?", (action, run_id)
                )
            return CancelOutcome("requested")

        out = await self._call(op)
        self._wake()
        return out

    async def delete(self, run_id: str) -> None:
        """Forget a run whatever its state."""
        await self._call(
            lambda conn: conn.execute("DELETE FROM sg_run_queue WHERE run_id = ?", (run_id,))
        )
        self._wake()

    async def pending(self, thread_id: str) -> Sequence[str]:
        """The thread's pending and running runs, in claim order."""

        def op(conn: sqlite3.Connection) -> list[str]:
            rows = conn.execute(
                "SELECT run_id FROM sg_run_queue WHERE thread_id = ? ORDER BY seq", (thread_id,)
            ).fetchall()
            return [r[0] for r in rows]

        return await self._call(op)

    async def wait(self, timeout: float) -> None:
        """Until this object changed the queue, another process committed to the file,
        a claim may have expired, or ``timeout`` passed."""
        if self._closed:
            return
        if self._event is None:
            self._event = asyncio.Event()
        event = self._event
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        if self._version is None:
            self._version = await self._read_version()
        while not self._closed:
            left = deadline - loop.time()
            if left <= 0:
                return
            try:
                await asyncio.wait_for(event.wait(), min(self.poll, left))
            except asyncio.TimeoutError:
                version = await self._read_version()
                if version != self._version:
                    self._version = version
                    return
                continue
            event.clear()
            return

    async def _read_version(self) -> int:
        def read() -> int:
            row = self._connect().execute("PRAGMA data_version").fetchone()
            return int(row[0])

        return await self._on_thread(read)

    async def claim_tick(self, cron_id: str, tick: float) -> bool:
        """``True`` once per ``(cron_id, tick)`` across every process sharing the file."""

        def op(conn: sqlite3.Connection) -> bool:
            cur = conn.execute(
                "INSERT OR IGNORE INTO sg_cron_ticks (cron_id, tick, fired_at) VALUES (?, ?, ?)",
                (cron_id, float(tick), time.time()),
            )
            return cur.rowcount == 1

        return await self._call(op)


def _lost_why(conn: sqlite3.Connection, claim: Claim) -> str:
    row = conn.execute(
        "SELECT state, token FROM sg_run_queue WHERE run_id = ?", (claim.run.run_id,)
    ).fetchone()
    if row is None:
        return "the run finished, was cancelled or deleted"
    if row[1] != claim.token:
        return f"the claim expired and another worker took the run over (token {row[1]})"
    return "the run is no longer claimed"
