"""The lease primitives of the SQL savers, as mixins over :mod:`.lease_sql`.

Each primitive is written once, as *calls*: a generator over the saver's dialect that
yields ``(op, single)`` -- one operation of :mod:`stategraph.checkpoint.lease_sql` to
run in one write transaction (``single``: the operation is one statement, atomic
without an explicit transaction) -- receives what the operation returned, and returns
the primitive's result. :class:`SqlLeases` serves sync savers (``SqliteSaver``,
``PostgresSaver``): it runs the operations through the saver's ``_lease_run``.
:class:`AsyncSqlLeases` serves ``AsyncPostgresSaver``: it awaits the saver's
``_alease_run``, and its sync twins run on the saver's event loop.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Generator, Iterable
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from stategraph.checkpoint._twins import on_loop
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
P = ParamSpec("P")

LeaseCalls = Generator[tuple[Op, bool], Any, T]
"""A lease primitive as calls: yields ``(op, single)``, receives the op's result."""


def _acquire(
    d: Dialect,
    thread_id: str,
    run_id: str,
    ttl: float,
    *,
    ticket: int | None = None,
    priority: int = PRIORITY_ENQUEUE,
    stop: str | None = None,
) -> LeaseCalls[LeaseAttempt]:
    """:meth:`LeaseSupport.lease_acquire`: without a ticket, first the one-statement
    fast path; then the full attempt in one transaction."""
    if ticket is None:
        fast: LeaseAttempt | None = yield acquire_fast(d, thread_id, run_id, ttl), True
        if fast is not None:
            return fast
    attempt: LeaseAttempt = yield acquire(d, thread_id, run_id, ttl, ticket, priority, stop), False
    return attempt


def _enqueue(d: Dialect, thread_id: str, run_id: str, ttl: float, priority: int) -> LeaseCalls[int]:
    """:meth:`LeaseSupport.lease_enqueue`."""
    return int((yield enqueue(d, thread_id, run_id, ttl, priority), False))


def _dequeue(d: Dialect, thread_id: str, ticket: int) -> LeaseCalls[None]:
    """:meth:`LeaseSupport.lease_dequeue`."""
    yield dequeue(d, thread_id, ticket), True


def _renew(d: Dialect, lease: Lease) -> LeaseCalls[str | None]:
    """:meth:`LeaseSupport.lease_renew`."""
    stop: str | None = yield renew(d, lease), True
    return stop


def _release(d: Dialect, lease: Lease, *, finished: bool = True) -> LeaseCalls[None]:
    """:meth:`LeaseSupport.lease_release` (one statement on PostgreSQL)."""
    yield release(d, lease, finished), d.name == "postgres"


def _rollback(d: Dialect, lease: Lease, tokens: Iterable[int]) -> LeaseCalls[int]:
    """:meth:`LeaseSupport.lease_rollback`."""
    return int((yield rollback(d, lease, list(tokens)), False))


def _named(method: Any, name: str, public: Callable[..., Any], doc: str) -> Any:
    """``method`` named ``name`` and reporting the signature of ``public``."""
    method.__name__ = method.__qualname__ = name
    method.__doc__ = doc
    method.__wrapped__ = public
    return method


def _run(
    calls: Callable[Concatenate[Dialect, P], LeaseCalls[T]],
) -> Callable[Concatenate[Any, P], T]:
    """The sync primitive carrying out ``calls`` through the saver's ``_lease_run``."""
    name = f"lease{calls.__name__}"

    def method(self: Any, *args: P.args, **kwargs: P.kwargs) -> T:
        gen = calls(self._lease_dialect, *args, **kwargs)
        result: Any = None
        try:
            while True:
                op, single = gen.send(result)
                result = self._lease_run(op, single=single)
        except StopIteration as done:
            value: T = done.value
            return value

    doc = f"See :meth:`LeaseSupport.{name}` (each operation one database transaction)."
    return _named(method, name, getattr(LeaseSupport, name), doc)


def _arun(
    calls: Callable[Concatenate[Dialect, P], LeaseCalls[T]],
) -> Callable[Concatenate[Any, P], Coroutine[Any, Any, T]]:
    """The async primitive carrying out ``calls`` through the saver's ``_alease_run``."""
    name = f"lease{calls.__name__}"

    async def method(self: Any, *args: P.args, **kwargs: P.kwargs) -> T:
        gen = calls(self._lease_dialect, *args, **kwargs)
        result: Any = None
        try:
            while True:
                op, single = gen.send(result)
                result = await self._alease_run(op, single=single)
        except StopIteration as done:
            value: T = done.value
            return value

    doc = f"See :meth:`LeaseSupport.{name}` (each operation one database transaction)."
    return _named(method, f"a{name}", getattr(LeaseSupport, name), doc)


class SqlLeases(LeaseSupport):
    """Lease primitives of a sync SQL saver: each runs its operations of this module
    through the saver's ``_lease_run(op, single)``."""

    lease_fencing = True
    lease_rollback_supported = True
    _lease_dialect: Dialect

    if TYPE_CHECKING:

        def _lease_run(self, op: Op, single: bool = False) -> Any: ...

    lease_acquire = _run(_acquire)
    lease_enqueue = _run(_enqueue)
    lease_dequeue = _run(_dequeue)
    lease_renew = _run(_renew)
    lease_release = _run(_release)
    lease_rollback = _run(_rollback)


class AsyncSqlLeases(LeaseSupport):
    """Lease primitives of an async SQL saver: each ``alease_*`` awaits its operations
    through the saver's ``_alease_run(op, single)``; the sync twins run them on the
    saver's event loop through its ``_sync(name, make)`` (:func:`~._twins.on_loop`)."""

    lease_fencing = True
    lease_rollback_supported = True
    _lease_dialect: Dialect

    if TYPE_CHECKING:

        async def _alease_run(self, op: Op, single: bool = False) -> Any: ...

        def _sync(self, name: str, make: Callable[[], Coroutine[Any, Any, T]]) -> T: ...

    alease_acquire = _arun(_acquire)
    alease_enqueue = _arun(_enqueue)
    alease_dequeue = _arun(_dequeue)
    alease_renew = _arun(_renew)
    alease_release = _arun(_release)
    alease_rollback = _arun(_rollback)

    lease_acquire = on_loop(alease_acquire, "lease_acquire")
    lease_enqueue = on_loop(alease_enqueue, "lease_enqueue")
    lease_dequeue = on_loop(alease_dequeue, "lease_dequeue")
    lease_renew = on_loop(alease_renew, "lease_renew")
    lease_release = on_loop(alease_release, "lease_release")
    lease_rollback = on_loop(alease_rollback, "lease_rollback")
