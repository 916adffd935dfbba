"""``PostgresRunQueue``: the server's durable run queue on procrastinate and PostgreSQL.

Each run is one procrastinate job in the queue's schema: its ``lock`` is the thread
(procrastinate hands out the jobs of one lock one at a time, in enqueue order, which
is rule 1 of :mod:`stategraph.server._queue`), its ``args`` the run, its
``scheduled_at`` the run's ``available_at``. A claim is procrastinate's
``SKIP LOCKED`` fetch under a procrastinate worker row registered for that claim:
the row's id is the claim's fencing ``token`` and its heartbeat is renewed with the
claim's. The claim's expiry, attempt count and a pending cancel request live in
``sg_runs`` beside the job. An expired claim goes back to procrastinate's ``todo``
through its ``retry`` function (keeping the job id, so the run keeps its place in its
thread) and the next claim takes it. Finished runs stay as procrastinate's
``succeeded``/``failed``/``aborted`` jobs, with their event history, for
``keep_finished`` seconds, then are purged.

Times come from the database clock (``clock_timestamp()``), so processes on machines
whose clocks differ still agree on when a claim expires.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import psycopg
from psycopg import errors, sql
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

from stategraph.server._db import Op, drive_cursor
from stategraph.server._pgqueue import _sql
from stategraph.server._pgqueue._schema import check_identifier, check_queue_name, migrate
from stategraph.server._pgqueue._wakeup import Listener
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

__all__ = ["PostgresRunQueue"]

T = TypeVar("T")
R = TypeVar("R")
Conn = psycopg.AsyncConnection[Any]


async def drive_records(conn: Conn, op: Op[R]) -> R:
    """Run a records operation (``server/_db``: a generator of ``?``-style statements)
    on ``conn``, inside the caller's transaction."""
    async with conn.cursor() as cur:
        return await drive_cursor(cur, op)


# procrastinate's end states for our final statuses
_JOB_STATUS = {
    "success": "succeeded",
    "error": "failed",
    "timeout": "failed",
    "interrupted": "aborted",
}


def _lock(thread_id: str) -> str:
    return f"thread:{thread_id}"


def _run_of(args: dict[str, Any]) -> QueuedRun:
    return QueuedRun(
        run_id=args["run_id"],
        thread_id=args["thread_id"],
        assistant_id=args["assistant_id"],
        kwargs=args["kwargs"],
        multitask_strategy=args["multitask_strategy"],
        available_at=float(args["available_at"]),
    )


class PostgresRunQueue:
    """The durable run queue in PostgreSQL, shared by every process of a deployment.

    ``dsn`` is a libpq connection string. ``schema`` (default ``stategraph_queue``)
    holds every table of the queue; ``queue_name`` (default ``runs``) names the
    procrastinate queue, so several deployments can share one schema. ``keep_finished``
    is how long finished runs stay as procrastinate jobs (with their event history)
    before they are purged (``0``: deleted at once); ``keep_ticks`` how long a fired
    cron tick is remembered (ticks older than that are refused). ``pool_max`` bounds
    the connections of this object (plus one for ``LISTEN``).
    """

    def __init__(
        self,
        dsn: str,
        *,
        schema: str = "stategraph_queue",
        queue_name: str = "runs",
        keep_finished: float = 24 * 3600.0,
        keep_ticks: float = 7 * 24 * 3600.0,
        pool_min: int = 1,
        pool_max: int = 10,
        connect_timeout: float = 30.0,
    ) -> None:
        if not isinstance(dsn, str) or not dsn:
            raise ValueError(
                "PostgresRunQueue needs a PostgreSQL connection string, e.g. "
                "'postgresql://user@host:5432/db' (the server's --postgres DSN)."
            )
        for name, value in (("keep_finished", keep_finished), ("keep_ticks", keep_ticks)):
            if not isinstance(value, (int, float)) or value < 0:
                raise ValueError(f"{name}={value!r}: give a number of seconds >= 0.")
        if not isinstance(pool_max, int) or pool_max < 1 or pool_min < 0 or pool_min > pool_max:
            raise ValueError(
                f"pool_min={pool_min!r}, pool_max={pool_max!r}: need 0 <= pool_min <= pool_max, "
                "pool_max >= 1."
            )
        self.dsn = dsn
        self.schema = check_identifier(schema, "schema")
        self.queue_name = check_queue_name(queue_name)
        self.keep_finished = float(keep_finished)
        self.keep_ticks = float(keep_ticks)
        self.channel = _sql.CHANNEL_PREFIX + self.queue_name
        self._pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
            dsn,
            kwargs={"autocommit": True},
            min_size=pool_min,
            max_size=pool_max,
            open=False,
            configure=self._configure,
            check=AsyncConnectionPool.check_connection,
            timeout=connect_timeout,
            name=f"stategraph-queue-{self.schema}",
        )
        self._listener = Listener(dsn, self.channel)
        self._opened = False
        self._open_lock: asyncio.Lock | None = None
        self._closed = False
        self._last_purge = 0.0
        self._seen: int | None = None
        self._due: tuple[float, float | None] | None = None
        """``(monotonic time of the look, seconds until due)`` from the last idle claim."""

    # -- plumbing ---------------------------------------------------------------------
    async def _configure(self, conn: Conn) -> None:
        # the queue's schema first; then the connection's own path, where the server's
        # records live, so a transaction here can write both (``*_with`` methods)
        row = await (await conn.execute("SELECT current_setting('search_path')")).fetchone()
        rest = row[0] if row and row[0] else "public"
        await conn.execute(
            sql.SQL("SET search_path TO {}, ").format(sql.Identifier(self.schema)) + sql.SQL(rest)
        )

    async def _open(self) -> None:
        if self._closed:
            raise RuntimeError(f"The run queue in schema '{self.schema}' is closed.")
        if self._opened:
            return
        if self._open_lock is None:
            self._open_lock = asyncio.Lock()
        async with self._open_lock:
            if not self._opened:
                await self._pool.open(wait=False)
                self._opened = True

    async def _tx(self, fn: Callable[[Conn], Awaitable[T]], *, retries: int = 3) -> T:
        """Run ``fn`` in one transaction; a deadlock or a lost race on procrastinate's
        one-running-job-per-lock index is retried (nothing of the failed try stays)."""
        await self._open()
        for attempt in range(retries + 1):
            try:
                async with self._pool.connection() as conn, conn.transaction():
                    return await fn(conn)
            except (errors.DeadlockDetected, errors.SerializationFailure):
                if attempt == retries:
                    raise
            except errors.UniqueViolation as exc:
                if (
                    attempt == retries
                    or exc.diag.constraint_name != "procrastinate_jobs_lock_idx_v1"
                ):
                    raise
            await asyncio.sleep(0.005 * (attempt + 1))
        raise AssertionError("unreachable")  # pragma: no cover

    async def _read(self, query: str, params: Any = None) -> list[Any]:
        """One read outside a transaction (one round trip, nothing to commit)."""
        await self._open()
        async with self._pool.connection() as conn:
            return await (await conn.execute(query, params)).fetchall()

    async def _one(self, conn: Conn, query: str, params: Any = None) -> Any:
        return await (await conn.execute(query, params)).fetchone()

    async def _notify(self, conn: Conn) -> None:
        await conn.execute(_sql.NOTIFY, (self.channel,))

    async def _lost(self, conn: Conn, claim: Claim) -> ClaimLost:
        row = await self._one(conn, _sql.RUN_STATE, (claim.run.run_id,))
        if row is None:
            why = "the run was deleted"
        elif row[0] not in ("todo", "doing"):
            why = f"the run already ended ({row[0]}) or was cancelled"
        elif row[1] is not None and row[1] != claim.token:
            why = f"the claim expired and another worker took the run over (token {row[1]})"
        else:
            why = "the claim expired and the run went back to the queue"
        return ClaimLost(claim.run.run_id, claim.token, why)

    # -- RunQueue: set-up and shutdown -----------------------------------------------
    async def setup(self) -> None:
        """Create or upgrade the queue's schema (idempotent; safe to race)."""
        await self._open()
        async with self._pool.connection() as conn:
            await migrate(conn, self.schema)

    async def aclose(self) -> None:
        """Stop listening, wake every :meth:`wait`, and close the connections."""
        if self._closed:
            return
        self._closed = True
        await self._listener.close()
        if self._opened:
            await self._pool.close()

    # -- RunQueue: the API side --------------------------------------------------------
    async def enqueue(self, run: QueuedRun) -> Enqueued:
        """Add ``run`` and apply its multitask strategy, in one transaction."""
        queued, _ = await self.enqueue_with(run, None)
        return queued

    async def enqueue_with(
        self, run: QueuedRun, records: Callable[[], Op[R]] | None
    ) -> tuple[Enqueued, R | None]:
        """:meth:`enqueue`, and run the records operation ``records()`` (the run's
        record, its thread's status) in the same transaction, after the queue's own
        statements (queue rows are locked before record rows, everywhere). An
        exception from it rolls the whole enqueue back."""
        if run.multitask_strategy not in MULTITASK_STRATEGIES:
            raise ValueError(
                f"Unknown multitask_strategy {run.multitask_strategy!r} for run "
                f"'{run.run_id}': use one of {', '.join(MULTITASK_STRATEGIES)}."
            )
        args = {
            "run_id": run.run_id,
            "thread_id": run.thread_id,
            "assistant_id": run.assistant_id,
            "kwargs": dict(run.kwargs),
            "multitask_strategy": run.multitask_strategy,
            "available_at": float(run.available_at),
        }

        async def op(conn: Conn) -> tuple[Enqueued, R | None]:
            if run.thread_id is not None:
                await conn.execute(_sql.THREAD_LOCK, (self.schema, run.thread_id))
            if await self._one(conn, _sql.RUN_EXISTS, (run.run_id,)):
                raise ValueError(f"Run '{run.run_id}' is already in the queue.")
            cancelled: list[str] = []
            removed: list[str] = []
            if run.thread_id is not None:
                rows = await (await conn.execute(_sql.THREAD_RUNS, (run.thread_id,))).fetchall()
                if rows and run.multitask_strategy == "reject":
                    raise ThreadBusy(run.thread_id, [r[0] for r in rows])
                if run.multitask_strategy in CANCEL_ACTIONS:
                    for run_id, job_id, status, _cancel in rows:
                        cancelled.append(run_id)
                        if status == "todo":
                            removed.append(run_id)
                            await conn.execute(_sql.CANCEL_PENDING, (job_id,))
                            await conn.execute(_sql.MARK_REMOVED, (job_id,))
                        else:
                            await conn.execute(
                                _sql.REQUEST_CANCEL, (run.multitask_strategy, job_id)
                            )
            row = await self._one(
                conn,
                _sql.DEFER,
                {
                    "queue": self.queue_name,
                    "task": _sql.TASK,
                    "lock": None if run.thread_id is None else _lock(run.thread_id),
                    "args": Jsonb(args),
                    "available_at": float(run.available_at),
                },
            )
            if await self._one(conn, _sql.INSERT_RUN, (run.run_id, row[0], run.thread_id)) is None:
                # a concurrent enqueue of the same id won (the job above rolls back)
                raise ValueError(f"Run '{run.run_id}' is already in the queue.")
            done = None if records is None else await drive_records(conn, records())
            return Enqueued(tuple(cancelled), tuple(removed)), done

        return await self._tx(op)

    async def cancel(self, run_id: str, action: CancelAction) -> CancelOutcome:
        """Remove a pending run, or record the request for a running one's worker."""
        if action not in CANCEL_ACTIONS:
            raise ValueError(
                f"Unknown cancel action {action!r} for run '{run_id}': use 'interrupt' or "
                "'rollback'."
            )

        async def op(conn: Conn) -> CancelOutcome:
            row = await self._one(conn, _sql.CANCEL_STATE, (run_id,))
            if row is None or row[1] not in ("todo", "doing"):
                return CancelOutcome("absent")
            job_id, status, _cancel = row
            if status == "todo":
                await conn.execute(_sql.CANCEL_PENDING, (job_id,))
                await conn.execute(_sql.MARK_REMOVED, (job_id,))
                await self._notify(conn)  # a later run of the thread may be free now
                return CancelOutcome("removed")
            await conn.execute(_sql.REQUEST_CANCEL, (action, job_id))
            return CancelOutcome("requested")

        return await self._tx(op)

    async def delete(self, run_id: str) -> None:
        """Forget ``run_id`` whatever its state; a running run's claim turns stale."""

        async def op(conn: Conn) -> None:
            row = await self._one(conn, _sql.LOCK_CLAIM, (run_id,))
            if row is None:
                return
            job_id, _status, token = row
            await conn.execute(_sql.DELETE_JOB, (job_id,))
            if token is not None:
                await conn.execute(_sql.UNREGISTER, (token,))
            await self._notify(conn)

        await self._tx(op)

    async def pending(self, thread_id: str) -> Sequence[str]:
        """The thread's pending and running runs, in claim order."""

        return [r[0] for r in await self._read(_sql.PENDING, (thread_id,))]

    # -- RunQueue: the worker side -------------------------------------------------------
    async def claim(self, worker_id: str, lease_seconds: float) -> Claim | None:
        """Take over expired claims, then claim the next runnable run (or ``None``)."""
        taken = await self.claim_with(worker_id, lease_seconds, None)
        return None if taken is None else taken[0]

    async def claim_with(
        self,
        worker_id: str,
        lease_seconds: float,
        records: Callable[[Claim], Op[R]] | None,
    ) -> tuple[Claim, R | None] | None:
        """:meth:`claim`, and run ``records(claim)`` (the run marked running) in the
        claim's transaction."""
        if lease_seconds <= 0:
            raise ValueError(f"lease_seconds={lease_seconds!r}: give a positive number of seconds.")

        await self._maybe_purge()
        # a look first, outside any transaction: an idle poll costs one read
        self._seen = self._listener.wakes
        [(any_expired, any_ready, due)] = await self._read(_sql.PROBE, {"queue": self.queue_name})
        if not any_expired and not any_ready:
            self._due = (time.monotonic(), due)
            return None
        self._due = None

        async def op(conn: Conn) -> tuple[Claim, R | None]:
            expired = []
            if any_expired:
                expired = await (await conn.execute(_sql.EXPIRED, (self.queue_name,))).fetchall()
            for job_id, token in expired:
                await conn.execute(_sql.REQUEUE, (job_id,))
                await conn.execute(_sql.DROP_CLAIM, (job_id,))
                if token is not None:
                    await conn.execute(_sql.UNREGISTER, (token,))
            token = (await self._one(conn, _sql.REGISTER))[0]
            job = await self._one(conn, _sql.FETCH, (self.queue_name, token))
            if job is None or job[0] is None:
                raise _Nothing
            attempt, cancel, expires = await self._one(
                conn,
                _sql.TAKE,
                {"token": token, "worker": worker_id, "lease": lease_seconds, "job_id": job[0]},
            )
            claim = Claim(_run_of(job[1]), worker_id, attempt, int(token), expires, cancel)
            done = None if records is None else await drive_records(conn, records(claim))
            return claim, done

        try:
            return await self._tx(op)
        except _Nothing:
            return None

    async def heartbeat(self, claim: Claim, lease_seconds: float) -> Beat:
        """Extend the claim; report a cancel request. Raises ClaimLost when stale."""

        async def op(conn: Conn) -> Beat:
            # a heartbeat lost in a database crash only shortens the claim: no fsync wait
            await conn.execute("SET LOCAL synchronous_commit TO OFF")
            row = await self._one(
                conn,
                _sql.BEAT,
                {"lease": lease_seconds, "run_id": claim.run.run_id, "token": claim.token},
            )
            if row is None:
                raise await self._lost(conn, claim)
            await conn.execute(_sql.HEARTBEAT_WORKER, (claim.token,))
            return Beat(row[1], row[0])

        return await self._tx(op)

    async def finish(self, claim: Claim, status: FinalStatus) -> None:
        """The run ended: procrastinate's end state, the thread freed, waiters woken."""
        await self.finish_with(claim, status, None)

    async def finish_with(
        self,
        claim: Claim,
        status: FinalStatus,
        records: Callable[[Sequence[str]], Op[R]] | None,
    ) -> R | None:
        """:meth:`finish`, and run ``records(others)`` (the run's final record, its
        thread's state; ``others``: the thread's other pending or running runs) in the
        same transaction, once the claim is known to hold: a stale claim
        (:class:`ClaimLost`) records nothing."""
        if status not in FINAL_STATUSES:
            raise ValueError(
                f"Unknown final status {status!r} for run '{claim.run.run_id}': use one of "
                f"{', '.join(FINAL_STATUSES)}."
            )
        delete = self.keep_finished == 0

        async def op(conn: Conn) -> R | None:
            job_id = await self._held(conn, claim)
            done = None
            if records is not None:
                others: list[str] = []
                if claim.run.thread_id is not None:
                    rows = await (
                        await conn.execute(_sql.PENDING, (claim.run.thread_id,))
                    ).fetchall()
                    others = [r[0] for r in rows if r[0] != claim.run.run_id]
                done = await drive_records(conn, records(others))
            await conn.execute(_sql.FINISH_JOB, (job_id, _JOB_STATUS[status], delete))
            if not delete:
                await conn.execute(_sql.MARK_FINISHED, (status, job_id))
            await conn.execute(_sql.UNREGISTER, (claim.token,))
            if claim.run.thread_id is not None:
                # only a run of the same thread can have waited for this one to end
                await conn.execute(
                    _sql.NOTIFY_IF_WAITING,
                    {"channel": self.channel, "lock": _lock(claim.run.thread_id)},
                )
            return done

        return await self._tx(op)

    async def release(self, claim: Claim, delay: float = 0.0) -> None:
        """Give the run back: pending again from now + ``delay``, keeping its place."""

        async def op(conn: Conn) -> None:
            job_id = await self._held(conn, claim)
            await conn.execute(_sql.REQUEUE_AFTER, {"job_id": job_id, "delay": max(0.0, delay)})
            await conn.execute(_sql.DROP_CLAIM, (job_id,))
            await conn.execute(_sql.UNREGISTER, (claim.token,))
            await self._notify(conn)

        await self._tx(op)

    async def _held(self, conn: Conn, claim: Claim) -> int:
        """Lock the claim's job and run rows; their job id, or ClaimLost when stale."""
        row = await self._one(conn, _sql.LOCK_CLAIM, (claim.run.run_id,))
        if row is None or row[1] != "doing" or row[2] != claim.token:
            raise await self._lost(conn, claim)
        return int(row[0])

    async def wait(self, timeout: float) -> None:
        """Until a ``NOTIFY`` of this queue, the next claim expiry or delayed run is due,
        :meth:`aclose`, or ``timeout`` seconds."""
        if self._closed:
            return
        await self._open()
        await self._listener.start()
        due = timeout
        looked, self._due = self._due, None
        left: float | None
        try:
            if looked is not None and time.monotonic() - looked[0] < 0.5:
                left = looked[1]  # the idle claim just read it
                if left is not None:
                    left -= time.monotonic() - looked[0]
            else:
                async with self._pool.connection(timeout=min(timeout, 1.0)) as conn:
                    row = await self._one(conn, _sql.NEXT_DUE, {"queue": self.queue_name})
                left = None if row is None else row[0]
            if left is not None:
                due = min(timeout, max(0.0, left) + 0.01)
        except psycopg.Error:  # the database is away (or the pool is busy): look again soon
            due = min(timeout, 1.0)
        seen, self._seen = self._seen, None
        await self._listener.wait(due, since=seen)

    # -- cron ------------------------------------------------------------------------------
    async def claim_tick(self, cron_id: str, tick: float) -> bool:
        """``True`` for exactly one caller per ``(cron_id, tick)`` across every process
        (procrastinate's periodic-defer record, unique per task, id and timestamp).
        A tick more than ``keep_ticks`` seconds older than the newest fired tick of
        its cron is refused (``False``): its record may already be forgotten."""
        if not isinstance(cron_id, str) or not 0 < len(cron_id) <= 128:
            raise ValueError(
                f"cron_id={cron_id!r}: give a non-empty string of at most 128 characters."
            )
        params = {
            "task": f"{_sql.CRON_TASK}/{self.queue_name}",
            "cron_id": cron_id,
            "ts": round(float(tick) * 1000),
            "keep_ms": round(self.keep_ticks * 1000),
        }

        async def op(conn: Conn) -> bool:
            await conn.execute(_sql.CRON_LOCK, params)
            fired = await self._one(conn, _sql.CLAIM_TICK, params) is not None
            if fired:
                await conn.execute(_sql.FORGET_TICKS, params)
            return fired

        return await self._tx(op)

    # -- housekeeping ------------------------------------------------------------------
    async def _maybe_purge(self, every: float = 60.0) -> None:
        now = time.monotonic()
        if self.keep_finished == 0 or now - self._last_purge < every:
            return
        self._last_purge = now

        async def op(conn: Conn) -> None:
            await conn.execute(_sql.PURGE, (self.queue_name, self.keep_finished))

        await self._tx(op)


class _Nothing(Exception):
    """No runnable run: roll the claim's transaction back (its worker row too)."""
