"""Per-thread leases stored in the saver's database (SQLite and PostgreSQL).

Three tables, created on first use with ``CREATE ... IF NOT EXISTS`` (they are not
numbered migrations of the checkpoint schema, so the checkpoint tables can evolve on
their own):

* ``sg_leases(thread_id, token, run_id, expires_at, stop)``: one row per thread that
  was ever leased. ``token`` is the fencing token of the latest holder and only ever
  grows; ``expires_at`` is in seconds since the epoch on the *database's* clock
  (``0`` once released); ``stop`` is a stop request made by a waiting run.
* ``sg_lease_queue(ticket, thread_id, run_id, priority, expires_at)``: runs waiting for
  a thread, served in ``(priority, ticket)`` order; a waiter refreshes its row each
  time it polls and loses its place when it stops polling for a lease ttl.
* ``sg_lease_log(thread_id, token, checkpoint_ns, checkpoint_id)``: the checkpoints
  each holder created, so that ``multitask_strategy="rollback"`` can delete those of
  the run it stopped. A release drops the rows of earlier holders (and its own when
  the run ended on its own).

Every operation is a generator (sans-I/O, like the run loop): it yields
``(sql, params)`` statements and receives each one's rows. The savers run it inside
one write transaction (``BEGIN IMMEDIATE`` on SQLite; on PostgreSQL the lease row is
locked with ``FOR UPDATE``/``FOR SHARE``), with :func:`run_sqlite`, :func:`run_psycopg`
or :func:`arun_psycopg`. :func:`fence` runs in the same transaction as each
checkpoint write.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from stategraph.checkpoint.lease import STOP_ROLLBACK, Lease, LeaseAttempt
from stategraph.errors import LeaseLostError

__all__ = [
    "Dialect",
    "SQLITE",
    "POSTGRES",
    "Op",
    "acquire",
    "acquire_fast",
    "enqueue",
    "dequeue",
    "renew",
    "release",
    "fence",
    "PG_FENCE",
    "pg_fence_statements",
    "rollback",
    "run_sqlite",
    "run_psycopg",
    "arun_psycopg",
]

Statement = tuple[str, Sequence[Any]]
Rows = list[tuple[Any, ...]]
Op = Generator[Statement, Rows, Any]


@dataclass(frozen=True)
class Dialect:
    """What differs between the databases: placeholders, clock, locks, table names."""

    name: str
    now: str
    """SQL expression: the database clock in seconds since the epoch."""
    for_update: str
    for_share: str
    checkpoints: str
    writes: str
    ddl: tuple[str, ...]

    def q(self, sql: str) -> str:
        """``sql`` with this dialect's placeholders (statements are written with ``?``)."""
        return sql if self.name == "sqlite" else sql.replace("?", "%s")


SQLITE = Dialect(
    name="sqlite",
    now="((julianday('now') - 2440587.5) * 86400.0)",
    for_update="",
    for_share="",
    checkpoints="checkpoints",
    writes="writes",
    ddl=(
        """CREATE TABLE IF NOT EXISTS sg_leases (
            thread_id TEXT PRIMARY KEY,
            token INTEGER NOT NULL,
            run_id TEXT NOT NULL,
            expires_at REAL NOT NULL,
            stop TEXT
        )""",
        """CREATE TABLE IF NOT EXISTS sg_lease_queue (
            ticket INTEGER PRIMARY KEY AUTOINCREMENT,
            thread_id TEXT NOT NULL,
            run_id TEXT NOT NULL,
            priority INTEGER NOT NULL,
            expires_at REAL NOT NULL
        )""",
        "CREATE INDEX IF NOT EXISTS sg_lease_queue_thread "
        "ON sg_lease_queue (thread_id, priority, ticket)",
        """CREATE TABLE IF NOT EXISTS sg_lease_log (
            thread_id TEXT NOT NULL,
            token INTEGER NOT NULL,
            checkpoint_ns TEXT NOT NULL,
            checkpoint_id TEXT NOT NULL,
            PRIMARY KEY (thread_id, token, checkpoint_ns, checkpoint_id)
        )""",
    ),
)

POSTGRES = Dialect(
    name="postgres",
    now="extract(epoch from clock_timestamp())::float8",
    for_update=" FOR UPDATE",
    for_share=" FOR SHARE",
    checkpoints="sg_checkpoints",
    writes="sg_checkpoint_writes",
    ddl=(
        """CREATE TABLE IF NOT EXISTS sg_leases (
            thread_id TEXT COLLATE "C" PRIMARY KEY,
            token BIGINT NOT NULL,
            run_id TEXT NOT NULL,
            expires_at DOUBLE PRECISION NOT NULL,
            stop TEXT
        )""",
        """CREATE TABLE IF NOT EXISTS sg_lease_queue (
            ticket BIGSERIAL PRIMARY KEY,
            thread_id TEXT COLLATE "C" NOT NULL,
            run_id TEXT NOT NULL,
            priority INTEGER NOT NULL,
            expires_at DOUBLE PRECISION NOT NULL
        )""",
        "CREATE INDEX IF NOT EXISTS sg_lease_queue_thread "
        "ON sg_lease_queue (thread_id, priority, ticket)",
        """CREATE TABLE IF NOT EXISTS sg_lease_log (
            thread_id TEXT COLLATE "C" NOT NULL,
            token BIGINT NOT NULL,
            checkpoint_ns TEXT COLLATE "C" NOT NULL,
            checkpoint_id TEXT COLLATE "C" NOT NULL,
            PRIMARY KEY (thread_id, token, checkpoint_ns, checkpoint_id)
        )""",
    ),
)


def _changed(d: Dialect, rows: Rows, then: Statement) -> Op:
    """The rows a ``RETURNING`` statement returned. SQLite runs it without the
    ``RETURNING`` clause (older SQLite builds lack it) inside the caller's transaction,
    then ``then`` when ``changes()`` says a row was written."""
    if d.name != "sqlite":
        return rows
    changed = yield ("SELECT changes()", ())
    if not changed[0][0]:
        return []
    return (yield then)


def _returning(d: Dialect, sql: str) -> str:
    """``sql`` as :func:`_changed` expects it for this dialect."""
    return sql.split(" RETURNING ")[0] if d.name == "sqlite" else sql


def acquire_fast(d: Dialect, thread_id: str, run_id: str, ttl: float) -> Op:
    """The common case in one statement: take the lease when it is free and nobody
    waits. Returns the :class:`LeaseAttempt`, or ``None`` (then run :func:`acquire`)."""
    sql = (
        "INSERT INTO sg_leases (thread_id, token, run_id, expires_at) "
        f"VALUES (?, 1, ?, {d.now} + ?) ON CONFLICT (thread_id) DO UPDATE SET "
        "token = sg_leases.token + 1, run_id = excluded.run_id, "
        "expires_at = excluded.expires_at, stop = NULL "
        f"WHERE sg_leases.expires_at < {d.now} AND NOT EXISTS (SELECT 1 FROM "
        "sg_lease_queue AS q WHERE q.thread_id = excluded.thread_id "
        f"AND q.expires_at >= {d.now}) RETURNING token"
    )
    rows = yield (d.q(_returning(d, sql)), (thread_id, run_id, ttl))
    rows = yield from _changed(
        d, rows, (d.q("SELECT token FROM sg_leases WHERE thread_id = ?"), (thread_id,))
    )
    if not rows:
        return None
    return LeaseAttempt(Lease(thread_id, int(rows[0][0]), run_id, ttl))


def acquire(
    d: Dialect,
    thread_id: str,
    run_id: str,
    ttl: float,
    ticket: int | None,
    priority: int,
    stop: str | None,
) -> Op:
    """Take the lease of ``thread_id`` if free and nobody is ahead (see
    ``LeaseSupport.lease_acquire``); returns a :class:`LeaseAttempt`."""
    yield (
        d.q(
            "INSERT INTO sg_leases (thread_id, token, run_id, expires_at) "
            "VALUES (?, 0, '', 0) ON CONFLICT (thread_id) DO NOTHING"
        ),
        (thread_id,),
    )
    rows = yield (
        d.q(
            f"SELECT token, run_id, expires_at, stop, {d.now} FROM sg_leases "
            f"WHERE thread_id = ?{d.for_update}"
        ),
        (thread_id,),
    )
    token, holder, expires, current_stop, now = rows[0]
    token = int(token)
    if ticket is not None:
        yield (
            d.q(
                "INSERT INTO sg_lease_queue (ticket, thread_id, run_id, priority, expires_at) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (ticket) DO UPDATE SET "
                "expires_at = excluded.expires_at"
            ),
            (ticket, thread_id, run_id, priority, now + ttl),
        )
    yield (
        d.q("DELETE FROM sg_lease_queue WHERE thread_id = ? AND expires_at < ?"),
        (thread_id, now),
    )
    if ticket is None:
        rows = yield (d.q("SELECT COUNT(*) FROM sg_lease_queue WHERE thread_id = ?"), (thread_id,))
    else:
        rows = yield (
            d.q(
                "SELECT COUNT(*) FROM sg_lease_queue WHERE thread_id = ? AND "
                "(priority < ? OR (priority = ? AND ticket < ?))"
            ),
            (thread_id, priority, priority, ticket),
        )
    ahead = int(rows[0][0]) > 0
    free = expires < now
    if free and not ahead:
        new = token + 1
        yield (
            d.q(
                "UPDATE sg_leases SET token = ?, run_id = ?, expires_at = ?, stop = NULL "
                "WHERE thread_id = ?"
            ),
            (new, run_id, now + ttl, thread_id),
        )
        if ticket is not None:
            yield (d.q("DELETE FROM sg_lease_queue WHERE ticket = ?"), (ticket,))
        return LeaseAttempt(Lease(thread_id, new, run_id, ttl))
    if free:
        return LeaseAttempt(None)
    if stop is not None and current_stop != STOP_ROLLBACK and current_stop != stop:
        yield (
            d.q("UPDATE sg_leases SET stop = ? WHERE thread_id = ? AND token = ?"),
            (stop, thread_id, token),
        )
    return LeaseAttempt(None, holder, token)


def enqueue(d: Dialect, thread_id: str, run_id: str, ttl: float, priority: int) -> Op:
    """Add a waiter for ``thread_id``; returns its ticket.

    The lease row is locked first, so tickets are handed out in the order in which
    acquirers of this thread see them."""
    yield (
        d.q(
            "INSERT INTO sg_leases (thread_id, token, run_id, expires_at) "
            "VALUES (?, 0, '', 0) ON CONFLICT (thread_id) DO NOTHING"
        ),
        (thread_id,),
    )
    yield (d.q(f"SELECT token FROM sg_leases WHERE thread_id = ?{d.for_update}"), (thread_id,))
    sql = (
        "INSERT INTO sg_lease_queue (thread_id, run_id, priority, expires_at) "
        f"VALUES (?, ?, ?, {d.now} + ?) RETURNING ticket"
    )
    rows = yield (d.q(_returning(d, sql)), (thread_id, run_id, priority, ttl))
    rows = yield from _changed(d, rows, ("SELECT last_insert_rowid()", ()))
    return int(rows[0][0])


def dequeue(d: Dialect, thread_id: str, ticket: int) -> Op:
    """Remove a waiter from the queue."""
    yield (d.q("DELETE FROM sg_lease_queue WHERE ticket = ?"), (ticket,))


def renew(d: Dialect, lease: Lease) -> Op:
    """Extend ``lease``; returns the pending stop request or raises if it was lost."""
    sql = (
        f"UPDATE sg_leases SET expires_at = {d.now} + ? WHERE thread_id = ? AND token = ? "
        f"AND expires_at >= {d.now} RETURNING stop"
    )
    rows = yield (d.q(_returning(d, sql)), (lease.ttl, lease.thread_id, lease.token))
    rows = yield from _changed(
        d, rows, (d.q("SELECT stop FROM sg_leases WHERE thread_id = ?"), (lease.thread_id,))
    )
    if not rows:
        raise LeaseLostError(
            lease.thread_id, lease.token, "it expired or another run took the thread over"
        )
    stop: str | None = rows[0][0]
    return stop


def release(d: Dialect, lease: Lease, finished: bool) -> Op:
    """Release ``lease`` (no-op if another run holds the thread now).

    The log of earlier holders is dropped (a rollback only ever targets the run it
    stopped, the holder just before it); ``finished`` drops this holder's log too (a
    run that ended on its own is never rolled back)."""
    params = (lease.thread_id, lease.token, lease.token, finished)
    forget = "DELETE FROM sg_lease_log WHERE thread_id = ? AND (token < ? OR (token = ? AND ?))"
    update = "UPDATE sg_leases SET expires_at = 0, stop = NULL WHERE thread_id = ? AND token = ?"
    if d.name == "postgres":  # one statement, one round trip
        yield (d.q(f"WITH forget AS ({forget}) {update}"), (*params, *params[:2]))
        return
    yield (d.q(forget), params)
    yield (d.q(update), params[:2])


def fence(
    d: Dialect,
    thread_id: str,
    token: int,
    ns: str,
    checkpoint_id: str | None,
    *,
    checked: bool = False,
) -> Op:
    """Check that ``token`` holds ``thread_id`` now (raise :class:`LeaseLostError` if
    not); with ``checkpoint_id``, log the checkpoint as created by this holder.

    ``checked``: an earlier statement of the same write transaction checked ``token``
    already, so only the log row is written. Only a transaction that has held the
    database's write lock since that check may say so (SQLite's ``BEGIN IMMEDIATE``):
    no other connection can have changed the lease in between, and the transaction
    commits all of its writes or none.
    """
    if not checked:
        rows = yield (
            d.q(
                f"SELECT token, expires_at, {d.now} FROM sg_leases WHERE thread_id = ?{d.for_share}"
            ),
            (thread_id,),
        )
        if not rows or int(rows[0][0]) != token:
            raise LeaseLostError(thread_id, token, "another run took the thread over")
        if rows[0][1] < rows[0][2]:
            raise LeaseLostError(thread_id, token, "the lease expired")
    if checkpoint_id is not None:
        yield (
            d.q(
                "INSERT INTO sg_lease_log (thread_id, token, checkpoint_ns, checkpoint_id) "
                "VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING"
            ),
            (thread_id, token, ns, checkpoint_id),
        )


PG_FENCE = (
    "SELECT 1 / (CASE WHEN EXISTS (SELECT 1 FROM sg_leases WHERE thread_id = %s AND "
    f"token = %s AND expires_at >= {POSTGRES.now} FOR SHARE) THEN 1 ELSE 0 END)"
)
"""PostgreSQL's fence as one statement that fails (division by zero) when the token
does not hold the thread, so that it can be pipelined with the write it guards: the
failure aborts the transaction and the write never commits."""


def pg_fence_statements(
    thread_id: str, token: int, ns: str, checkpoint_id: str | None
) -> list[Statement]:
    """The statements to pipeline before a fenced PostgreSQL write (see :data:`PG_FENCE`)."""
    statements: list[Statement] = [(PG_FENCE, (thread_id, token))]
    if checkpoint_id is not None:
        statements.append(
            (
                "INSERT INTO sg_lease_log (thread_id, token, checkpoint_ns, checkpoint_id) "
                "VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                (thread_id, token, ns, checkpoint_id),
            )
        )
    return statements


def rollback(d: Dialect, lease: Lease, tokens: Iterable[int]) -> Op:
    """Delete the checkpoints, and their writes, that the holders of ``tokens``
    created; ``lease`` must be held. Returns how many checkpoints were deleted."""
    yield from fence(d, lease.thread_id, lease.token, "", None)
    count = 0
    for token in tokens:
        key = (lease.thread_id, token)
        rows = yield (
            d.q(
                "SELECT checkpoint_ns, checkpoint_id FROM sg_lease_log "
                "WHERE thread_id = ? AND token = ?"
            ),
            key,
        )
        for ns, checkpoint_id in rows:
            target = (lease.thread_id, ns, checkpoint_id)
            where = "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?"
            yield (d.q(f"DELETE FROM {d.writes} {where}"), target)
            yield (d.q(f"DELETE FROM {d.checkpoints} {where}"), target)
            count += 1
        yield (d.q("DELETE FROM sg_lease_log WHERE thread_id = ? AND token = ?"), key)
    return count


def run_sqlite(conn: Any, op: Op) -> Any:
    """Run ``op`` on a :class:`sqlite3.Connection` (inside the caller's transaction)."""
    try:
        sql, params = next(op)
        while True:
            rows = conn.execute(sql, params).fetchall()
            sql, params = op.send(rows)
    except StopIteration as stop:
        return stop.value


def run_psycopg(cur: Any, op: Op) -> Any:
    """Run ``op`` on a psycopg cursor (inside the caller's transaction)."""
    try:
        sql, params = next(op)
        while True:
            cur.execute(sql, params)
            rows = cur.fetchall() if cur.description is not None else []
            sql, params = op.send(rows)
    except StopIteration as stop:
        return stop.value


async def arun_psycopg(cur: Any, op: Op) -> Any:
    """Run ``op`` on a psycopg async cursor (inside the caller's transaction)."""
    try:
        sql, params = next(op)
        while True:
            await cur.execute(sql, params)
            rows = await cur.fetchall() if cur.description is not None else []
            sql, params = op.send(rows)
    except StopIteration as stop:
        return stop.value
