"""The lease primitives of the SQL savers, as mixins over :mod:`.lease_sql`.

:class:`SqlLeases` serves sync savers (``SqliteSaver``, ``PostgresSaver``): each
primitive runs one operation of :mod:`stategraph.checkpoint.lease_sql` through the
saver's ``_lease_run``. :class:`AsyncSqlLeases` serves ``AsyncPostgresSaver``.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

from stategraph.checkpoint.lease import PRIORITY_ENQUEUE, Lease, LeaseAttempt, LeaseSupport
from stategraph.checkpoint.lease_sql import (
    Dialect,
    Op,
    acquire,
    acquire_fast,
    dequeue,
    enqueue,
    release,
    renew,
    rollback,
)

__all__ = ["SqlLeases", "AsyncSqlLeases"]

T = TypeVar("T")


class SqlLeases(LeaseSupport):
    """Lease primitives of a sync SQL saver: each runs one operation of this module in
    one write transaction through the saver's ``_lease_run(op, single)`` (``single``:
    the operation is one statement, atomic without an explicit transaction)."""

    lease_fencing = True
    lease_rollback_supported = True
    _lease_dialect: Dialect

    if TYPE_CHECKING:

        def _lease_run(self, op: Op, single: bool = False) -> Any: ...

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
        """See :meth:`LeaseSupport.lease_acquire` (one database transaction)."""
        d = self._lease_dialect
        if ticket is None:
            fast: LeaseAttempt | None = self._lease_run(
                acquire_fast(d, thread_id, run_id, ttl), single=True
            )
            if fast is not None:
                return fast
        attempt: LeaseAttempt = self._lease_run(
            acquire(d, thread_id, run_id, ttl, ticket, priority, stop)
        )
        return attempt

    def lease_enqueue(self, thread_id: str, run_id: str, ttl: float, priority: int) -> int:
        """See :meth:`LeaseSupport.lease_enqueue`."""
        return int(self._lease_run(enqueue(self._lease_dialect, thread_id, run_id, ttl, priority)))

    def lease_dequeue(self, thread_id: str, ticket: int) -> None:
        """See :meth:`LeaseSupport.lease_dequeue`."""
        self._lease_run(dequeue(self._lease_dialect, thread_id, ticket), single=True)

    def lease_renew(self, lease: Lease) -> str | None:
        """See :meth:`LeaseSupport.lease_renew`."""
        stop: str | None = self._lease_run(renew(self._lease_dialect, lease), single=True)
        return stop

    def lease_release(self, lease: Lease, *, finished: bool = True) -> None:
        """See :meth:`LeaseSupport.lease_release`."""
        d = self._lease_dialect
        self._lease_run(release(d, lease, finished), single=d.name == "postgres")

    def lease_rollback(self, lease: Lease, tokens: Iterable[int]) -> int:
        """See :meth:`LeaseSupport.lease_rollback`."""
        return int(self._lease_run(rollback(self._lease_dialect, lease, list(tokens))))


class AsyncSqlLeases(LeaseSupport):
    """Lease primitives of an async SQL saver: each ``alease_*`` runs one operation in
    one transaction through the saver's ``_alease_run(op)``; the sync twins run them
    on the saver's event loop through its ``_sync(name, make)``."""

    lease_fencing = True
    lease_rollback_supported = True
    _lease_dialect: Dialect

    if TYPE_CHECKING:

        async def _alease_run(self, op: Op, single: bool = False) -> Any: ...

        def _sync(self, name: str, make: Callable[[], Coroutine[Any, Any, T]]) -> T: ...

    async def alease_acquire(
        self,
        thread_id: str,
        run_id: str,
        ttl: float,
        *,
        ticket: int | None = None,
        priority: int = PRIORITY_ENQUEUE,
        stop: str | None = None,
    ) -> LeaseAttempt:
        """See :meth:`LeaseSupport.lease_acquire` (one database transaction)."""
        d = self._lease_dialect
        if ticket is None:
            fast: LeaseAttempt | None = await self._alease_run(
                acquire_fast(d, thread_id, run_id, ttl), single=True
            )
            if fast is not None:
                return fast
        attempt: LeaseAttempt = await self._alease_run(
            acquire(d, thread_id, run_id, ttl, ticket, priority, stop)
        )
        return attempt

    async def alease_enqueue(self, thread_id: str, run_id: str, ttl: float, priority: int) -> int:
        """See :meth:`LeaseSupport.lease_enqueue`."""
        op = enqueue(self._lease_dialect, thread_id, run_id, ttl, priority)
        return int(await self._alease_run(op))

    async def alease_dequeue(self, thread_id: str, ticket: int) -> None:
        """See :meth:`LeaseSupport.lease_dequeue`."""
        await self._alease_run(dequeue(self._lease_dialect, thread_id, ticket), single=True)

    async def alease_renew(self, lease: Lease) -> str | None:
        """See :meth:`LeaseSupport.lease_renew`."""
        stop: str | None = await self._alease_run(renew(self._lease_dialect, lease), single=True)
        return stop

    async def alease_release(self, lease: Lease, *, finished: bool = True) -> None:
        """See :meth:`LeaseSupport.lease_release`."""
        d = self._lease_dialect
        await self._alease_run(release(d, lease, finished), single=d.name == "postgres")

    async def alease_rollback(self, lease: Lease, tokens: Iterable[int]) -> int:
        """See :meth:`LeaseSupport.lease_rollback`."""
        op = rollback(self._lease_dialect, lease, list(tokens))
        return int(await self._alease_run(op))

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
        """Sync :meth:`alease_acquire` (from a thread outside the saver's event loop)."""
        return self._sync(
            "lease_acquire",
            lambda: self.alease_acquire(
                thread_id, run_id, ttl, ticket=ticket, priority=priority, stop=stop
            ),
        )

    def lease_enqueue(self, thread_id: str, run_id: str, ttl: float, priority: int) -> int:
        """Sync :meth:`alease_enqueue`."""
        return self._sync(
            "lease_enqueue", lambda: self.alease_enqueue(thread_id, run_id, ttl, priority)
        )

    def lease_dequeue(self, thread_id: str, ticket: int) -> None:
        """Sync :meth:`alease_dequeue`."""
        self._sync("lease_dequeue", lambda: self.alease_dequeue(thread_id, ticket))

    def lease_renew(self, lease: Lease) -> str | None:
        """Sync :meth:`alease_renew`."""
        return self._sync("lease_renew", lambda: self.alease_renew(lease))

    def lease_release(self, lease: Lease, *, finished: bool = True) -> None:
        """Sync :meth:`alease_release`."""
        self._sync("lease_release", lambda: self.alease_release(lease, finished=finished))

    def lease_rollback(self, lease: Lease, tokens: Iterable[int]) -> int:
        """Sync :meth:`alease_rollback`."""
        listed = list(tokens)
        return self._sync("lease_rollback", lambda: self.alease_rollback(lease, listed))
