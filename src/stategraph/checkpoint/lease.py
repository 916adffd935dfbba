"""Per-thread leases: the saver side of "one writer per thread".

A run that saves to a thread first takes the thread's *lease*: a record saying which
run may write and until when, with a *fencing token* that grows by one with every new
holder. The run renews the lease while it is alive (heartbeat) and releases it at the
end; a holder that crashed stops renewing and its lease expires, so another run can
take the thread over. Every ``put``/``put_writes`` of a leased run carries its token
in ``config["configurable"][LEASE_TOKEN_KEY]``; a saver that *fences* checks it in
the same transaction as the write and refuses the write with
:class:`~stategraph.errors.LeaseLostError` once the token is not the current,
unexpired one. A paused or cut-off writer therefore never adds a checkpoint after
its lease was lost.

The primitives live on every saver (:class:`LeaseSupport`, a base of
``BaseCheckpointSaver``); the runtime combines them into the multitask strategies.
The defaults, for savers that do not implement leases, keep an in-process lease
table per saver object: runs of one process (threads, asyncio tasks) never
interleave on a thread, but runs in other processes are not excluded and writes are
not fenced. The bundled savers implement real leases: ``InMemorySaver`` in process
(:class:`LocalLeases`), the SQLite and PostgreSQL savers in their database
(:mod:`stategraph.checkpoint.lease_sql`).
"""

from __future__ import annotations

import itertools
import math
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from stategraph.checkpoint._twins import run_inline
from stategraph.errors import LeaseLostError

__all__ = [
    "LEASE_TOKEN_KEY",
    "STOP_INTERRUPT",
    "STOP_ROLLBACK",
    "PRIORITY_PREEMPT",
    "PRIORITY_ENQUEUE",
    "Lease",
    "LeaseAttempt",
    "LeaseSupport",
    "LocalLeases",
    "lease_token",
]

LEASE_TOKEN_KEY = "__lease_token__"
"""Key of ``config["configurable"]`` carrying the writer's fencing token to the saver."""

STOP_INTERRUPT = "interrupt"
"""Stop request: end at the next step boundary, keep what was saved."""
STOP_ROLLBACK = "rollback"
"""Stop request: end at the next step boundary; the requester deletes what it saved."""

PRIORITY_PREEMPT = 0
"""Queue priority of runs that stopped the holder (``interrupt``/``rollback``)."""
PRIORITY_ENQUEUE = 1
"""Queue priority of runs that wait their turn (``enqueue``)."""


@dataclass(frozen=True)
class Lease:
    """A lease held on a thread: the right to write to it until it expires."""

    thread_id: str
    token: int
    """Fencing token: grows by one with each new holder of the thread."""
    run_id: str
    ttl: float
    """Seconds the lease lives after each renewal."""


@dataclass(frozen=True)
class LeaseAttempt:
    """The answer to one :meth:`LeaseSupport.lease_acquire` call."""

    lease: Lease | None
    """The lease, when it was granted."""
    holder_run_id: str | None = None
    """Run id of the current holder when not granted (``None``: free but runs queued)."""
    holder_token: int | None = None
    """Fencing token of the current holder when not granted."""


def lease_token(config: Mapping[str, Any]) -> int | None:
    """The fencing token a ``put``/``put_writes`` config carries, or ``None``."""
    conf = config.get("configurable")
    if not conf:
        return None
    token = conf.get(LEASE_TOKEN_KEY)
    return None if token is None else int(token)


@dataclass
class _Row:
    token: int
    run_id: str
    expires: float
    stop: str | None = None


@dataclass
class _Waiter:
    priority: int
    expires: float


@dataclass
class LocalLeases:
    """An in-process lease table (thread-safe): what ``InMemorySaver`` uses, and the
    fallback of savers that do not implement leases.

    Same rules as the database implementation: a free lease goes to the caller only
    when no live waiter is ahead of it in ``(priority, ticket)`` order; waiters that
    stop polling for longer than the lease ttl lose their place.
    """

    clock: Any = time.monotonic
    rows: dict[str, _Row] = field(default_factory=dict)
    queue: dict[str, dict[int, _Waiter]] = field(default_factory=dict)
    log: dict[tuple[str, int], list[tuple[str, str]]] = field(default_factory=dict)
    lock: Any = field(default_factory=threading.Lock)
    tickets: Any = field(default_factory=lambda: itertools.count(1))

    def acquire(
        self,
        thread_id: str,
        run_id: str,
        ttl: float,
        ticket: int | None = None,
        priority: int = PRIORITY_ENQUEUE,
        stop: str | None = None,
    ) -> LeaseAttempt:
        """Take the lease if free and nobody is ahead; else ask the holder to stop."""
        with self.lock:
            now = self.clock()
            waiters = self.queue.setdefault(thread_id, {})
            if ticket is not None:
                waiters[ticket] = _Waiter(priority, now + ttl)
            for t in [t for t, w in waiters.items() if w.expires < now]:
                del waiters[t]
            if ticket is None:
                ahead = bool(waiters)
            else:
                ahead = any((w.priority, t) < (priority, ticket) for t, w in waiters.items())
            row = self.rows.get(thread_id)
            free = row is None or row.expires < now
            if free and not ahead:
                token = (row.token if row is not None else 0) + 1
                self.rows[thread_id] = _Row(token, run_id, now + ttl)
                if ticket is not None:
                    waiters.pop(ticket, None)
                return LeaseAttempt(Lease(thread_id, token, run_id, ttl))
            if free or row is None:
                return LeaseAttempt(None)
            if stop is not None and row.stop != STOP_ROLLBACK:
                row.stop = stop
            return LeaseAttempt(None, row.run_id, row.token)

    def enqueue(self, thread_id: str, ttl: float, priority: int) -> int:
        """Join the thread's queue; returns the ticket (arrival order)."""
        with self.lock:
            ticket = next(self.tickets)
            self.queue.setdefault(thread_id, {})[ticket] = _Waiter(priority, self.clock() + ttl)
            return ticket

    def dequeue(self, thread_id: str, ticket: int) -> None:
        """Leave the queue (a waiter that gives up)."""
        with self.lock:
            self.queue.get(thread_id, {}).pop(ticket, None)

    def renew(self, lease: Lease) -> str | None:
        """Extend ``lease``; returns a pending stop request. Raises if it was lost."""
        with self.lock:
            row = self._held(lease.thread_id, lease.token)
            row.expires = self.clock() + lease.ttl
            return row.stop

    def release(self, lease: Lease, finished: bool = True) -> None:
        """Give the lease up (no-op when it was lost meanwhile); ``finished`` forgets
        the checkpoints the holder created (a finished run is never rolled back)."""
        with self.lock:
            row = self.rows.get(lease.thread_id)
            if row is not None and row.token == lease.token:
                row.expires = -math.inf
                row.stop = None
                for key in [
                    k
                    for k in self.log
                    if k[0] == lease.thread_id
                    and (k[1] < lease.token or (finished and k[1] == lease.token))
                ]:
                    del self.log[key]

    def check(self, thread_id: str, token: int) -> None:
        """Raise :class:`LeaseLostError` unless ``token`` holds the thread now.

        The caller holds its own storage lock, so check and write are one step."""
        with self.lock:
            self._held(thread_id, token)

    def record(self, thread_id: str, token: int, ns: str, checkpoint_id: str) -> None:
        """Remember that the holder of ``token`` created this checkpoint (for rollback)."""
        with self.lock:
            self.log.setdefault((thread_id, token), []).append((ns, checkpoint_id))

    def take_log(self, thread_id: str, tokens: Iterable[int]) -> list[tuple[str, str]]:
        """The checkpoints created under ``tokens`` (forgotten from the log)."""
        with self.lock:
            found: list[tuple[str, str]] = []
            for token in tokens:
                found.extend(self.log.pop((thread_id, token), ()))
            return found

    def _held(self, thread_id: str, token: int) -> _Row:
        row = self.rows.get(thread_id)
        if row is None or row.token != token:
            raise LeaseLostError(thread_id, token, "another run took the thread over")
        if row.expires < self.clock():
            raise LeaseLostError(thread_id, token, "the lease expired")
        return row


_LOCAL_INIT = threading.Lock()


class LeaseSupport:
    """The lease primitives every checkpoint saver offers (see the module docstring).

    These defaults keep an in-process table per saver object and do not fence
    writes; savers with shared storage override every method (sync and ``a``-async)
    and set :attr:`lease_fencing` to ``True``.
    """

    lease_fencing: bool = False
    """Whether ``put``/``put_writes`` check the fencing token (cross-process safety)."""
    lease_rollback_supported: bool = False
    """Whether :meth:`lease_rollback` can delete the checkpoints of a stopped run."""

    def _local_leases(self) -> LocalLeases:
        table: LocalLeases | None = self.__dict__.get("_sg_leases")
        if table is None:
            with _LOCAL_INIT:
                table = self.__dict__.get("_sg_leases")
                if table is None:
                    table = self.__dict__["_sg_leases"] = LocalLeases()
        return table

    def lease_acquire(
        self,
        thread_id: str,
        run_id: str,
        ttl: float,
        *,
        ticket: int | None = None,
        priority: int = PRIORITY_ENQUEUE,
        stop: str | None = None,
    ) -> LeaseAttempt:
        """Try once to take the lease of ``thread_id`` for ``ttl`` seconds.

        Granted when the lease is free (released or expired) and no live waiter is
        ahead of ``ticket`` (without a ticket: when nobody waits at all). Otherwise,
        with ``stop`` given, the holder is asked to stop (:data:`STOP_INTERRUPT` or
        :data:`STOP_ROLLBACK`, seen on its next :meth:`lease_renew`), and a waiter's
        ticket is kept alive for another ``ttl``.
        """
        return self._local_leases().acquire(thread_id, run_id, ttl, ticket, priority, stop)

    def lease_enqueue(self, thread_id: str, run_id: str, ttl: float, priority: int) -> int:
        """Join the queue of ``thread_id``; returns a ticket to pass to :meth:`lease_acquire`."""
        return self._local_leases().enqueue(thread_id, ttl, priority)

    def lease_dequeue(self, thread_id: str, ticket: int) -> None:
        """Leave the queue of ``thread_id`` (a waiter that gives up)."""
        self._local_leases().dequeue(thread_id, ticket)

    def lease_renew(self, lease: Lease) -> str | None:
        """Extend ``lease`` by its ttl; returns the stop request made by another run
        (``None`` if none). Raises :class:`~stategraph.errors.LeaseLostError` when the
        lease expired or was taken over."""
        return self._local_leases().renew(lease)

    def lease_release(self, lease: Lease, *, finished: bool = True) -> None:
        """Release ``lease`` (nothing happens if it was lost meanwhile).

        ``finished=True``: the run ended on its own, so a rollback asked for meanwhile
        finds nothing of it to delete; ``False``: it stopped because another run asked
        (its checkpoints stay listed for :meth:`lease_rollback`)."""
        self._local_leases().release(lease, finished)

    def lease_rollback(self, lease: Lease, tokens: Iterable[int]) -> int:
        """Delete the checkpoints (and their writes) saved under the fencing
        ``tokens`` of earlier holders, while holding ``lease``. Returns how many."""
        raise NotImplementedError(
            f"{type(self).__name__} cannot delete the checkpoints of a run, so "
            "multitask_strategy='rollback' is not available with it: use 'interrupt', "
            "'enqueue' or 'reject', or a bundled saver."
        )

    alease_acquire = run_inline(lease_acquire)
    alease_enqueue = run_inline(lease_enqueue)
    alease_dequeue = run_inline(lease_dequeue)
    alease_renew = run_inline(lease_renew)
    alease_release = run_inline(lease_release)
    alease_rollback = run_inline(lease_rollback)
