"""The run side of "one writer per thread": take the thread's lease, keep it, let go.

A root run with a checkpointer and a ``thread_id`` takes the thread's lease before it
reads the thread (:func:`acquire_sync` / :func:`acquire_async`), following its
``multitask_strategy`` when another run holds it:

* ``"reject"`` (the default): raise :class:`~stategraph.errors.ThreadBusyError`;
* ``"enqueue"``: wait in arrival order, at most ``enqueue_timeout`` seconds;
* ``"interrupt"``: ask the holder to stop at its next step boundary (it keeps what it
  saved), then run on the state it left;
* ``"rollback"``: the same, then delete the checkpoints the stopped run created.

While the run is alive a heartbeat renews the lease every third of ``lease_timeout``
(at most every second) and learns about stop requests; the loop only looks at
:attr:`RunGuard.preempt` at each step boundary. The fencing token travels with every
``put``/``put_writes`` (:func:`fenced`); the saver checks it. Nested runs (subgraphs)
share their root run's guard.
"""

from __future__ import annotations

import math
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from stategraph.checkpoint.lease import (
    LEASE_TOKEN_KEY,
    PRIORITY_ENQUEUE,
    PRIORITY_PREEMPT,
    STOP_ROLLBACK,
    Lease,
    LeaseAttempt,
)
from stategraph.constants import CONF
from stategraph.errors import LeaseLostError, RunPreempted, ThreadBusyError

if TYPE_CHECKING:
    import asyncio

__all__ = [
    "STRATEGIES",
    "DEFAULT_STRATEGY",
    "DEFAULT_LEASE_TIMEOUT",
    "DEFAULT_ENQUEUE_TIMEOUT",
    "LeaseSettings",
    "lease_settings",
    "RunGuard",
    "acquire_sync",
    "acquire_async",
    "fenced",
]

STRATEGIES = ("reject", "enqueue", "interrupt", "rollback")
"""The values of ``multitask_strategy``."""
DEFAULT_STRATEGY = "reject"
"""What a run does when its thread is busy, unless told otherwise (LangGraph's
platform default too): fail at once, change nothing."""
DEFAULT_LEASE_TIMEOUT = 30.0
"""Seconds a lease lives without renewal: how long a crashed holder blocks its thread."""
DEFAULT_ENQUEUE_TIMEOUT = 300.0
"""Seconds a waiting run (enqueue, interrupt, rollback) waits before giving up."""


@dataclass(frozen=True)
class LeaseSettings:
    """The checked lease settings of one root run."""

    strategy: str = DEFAULT_STRATEGY
    lease_timeout: float = DEFAULT_LEASE_TIMEOUT
    enqueue_timeout: float | None = DEFAULT_ENQUEUE_TIMEOUT

    @property
    def renew_every(self) -> float:
        """Seconds between heartbeats."""
        return min(self.lease_timeout / 3, 1.0)

    @property
    def poll_every(self) -> float:
        """Seconds between two attempts of a waiting run."""
        return max(0.005, min(0.05, self.lease_timeout / 10))


def _setting(cfg: Mapping[str, Any], key: str, default: Any) -> Any:
    """A run setting from the config's top level, else from its ``configurable``.

    LangGraph apps put their own settings in ``configurable``; a lease setting there
    is honoured rather than silently ignored (the top level wins when both are given).
    """
    if key in cfg:
        return cfg[key]
    conf = cfg.get(CONF)
    if isinstance(conf, Mapping) and key in conf:
        return conf[key]
    return default


def _seconds(cfg: Mapping[str, Any], key: str, default: float | None) -> float | None:
    value = _setting(cfg, key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(
            f'{key} must be a number of seconds, got {value!r}. Pass e.g. config={{"{key}": 30}}.'
        )
    return float(value)


def lease_settings(cfg: Mapping[str, Any], strategy: str | None) -> LeaseSettings:
    """Read and check ``multitask_strategy``, ``lease_timeout`` and
    ``enqueue_timeout`` (argument first, then the config), before the run starts."""
    chosen = strategy if strategy is not None else _setting(cfg, "multitask_strategy", None)
    if chosen is None:
        chosen = DEFAULT_STRATEGY
    if chosen not in STRATEGIES:
        raise ValueError(
            f"Unknown multitask_strategy {chosen!r}: choose one of {list(STRATEGIES)} "
            "(what a run does when another run holds its thread)."
        )
    ttl = _seconds(cfg, "lease_timeout", DEFAULT_LEASE_TIMEOUT)
    if ttl is None or ttl <= 0:
        raise ValueError(
            f"lease_timeout must be a positive number of seconds (how long a thread's "
            f"lease lives without renewal), got {ttl!r}. Pass e.g. "
            'config={"lease_timeout": 30}.'
        )
    wait = _seconds(cfg, "enqueue_timeout", DEFAULT_ENQUEUE_TIMEOUT)
    if wait is not None and wait < 0:
        raise ValueError(
            f"enqueue_timeout must be a number of seconds >= 0 (how long a run waits for "
            f"its thread) or None (no limit), got {wait!r}."
        )
    return LeaseSettings(str(chosen), ttl, wait)


def fenced(config: dict[str, Any], token: int) -> dict[str, Any]:
    """``config`` with the fencing token added to its ``configurable``."""
    return {**config, CONF: {**config.get(CONF, {}), LEASE_TOKEN_KEY: token}}


class RunGuard:
    """The lease of one root run, its heartbeat, and what the heartbeat learned."""

    def __init__(self, saver: Any, lease: Lease, settings: LeaseSettings) -> None:
        self.saver = saver
        self.lease = lease
        self.settings = settings
        self.token: int | None = lease.token if getattr(saver, "lease_fencing", False) else None
        """The fencing token to send with each write; ``None`` when the saver does not
        fence (a wrapper that forwards writes to a fencing saver must not pass a token
        the inner saver never granted)."""
        self.preempt: BaseException | None = None
        """Set by the heartbeat: the error the run stops with at its next step boundary."""
        self._task: asyncio.Task[None] | None = None
        self._closing = False
        """Set by :meth:`aclose`: the async heartbeat stops even if the cancellation
        that aclose() sends is swallowed on the way."""

    def token_for(self, saver: Any) -> int | None:
        """The token to send with ``saver``'s writes: only the saver that granted the
        lease knows it (a subgraph with a checkpointer of its own gets none)."""
        return self.token if saver is self.saver else None

    def stopped_run(self, status: str) -> bool:
        """Whether the run ended because another run asked it to (loop ``status``)."""
        return isinstance(self.preempt, RunPreempted) and status != "done"

    def _heard(self, stop: str | None) -> None:
        if stop is not None and self.preempt is None:
            self.preempt = RunPreempted(self.lease.thread_id, stop)

    # -- sync -------------------------------------------------------------------
    def start_heartbeat(self) -> None:
        """Have the process's heartbeat thread renew the lease until :meth:`close`."""
        _KEEPER.add(self)

    def beat(self) -> bool:
        """Renew once (from the heartbeat thread); ``False`` once the lease is lost."""
        try:
            self._heard(self.saver.lease_renew(self.lease))
        except LeaseLostError as exc:
            self.preempt = exc
            return False
        except Exception:
            pass  # a transient storage error: try again; the fence stays safe
        return True

    def close(self, finished: bool) -> None:
        """Stop the heartbeat and release the lease. ``finished=False`` (the run was
        preempted) keeps the record of its checkpoints for a rollback."""
        _KEEPER.remove(self)
        if isinstance(self.preempt, LeaseLostError):
            return  # someone else holds it now
        try:
            self.saver.lease_release(self.lease, finished=finished)
        except Exception:
            # the storage failed (the run's own error, if any, is what the caller
            # sees); the lease is not lost for good: it expires after lease_timeout
            return

    # -- async ------------------------------------------------------------------
    def start_aheartbeat(self) -> None:
        """Renew the lease from an asyncio task until :meth:`aclose`."""
        import asyncio

        self._task = asyncio.ensure_future(self._abeat())

    async def _abeat(self) -> None:
        every = self.settings.renew_every
        while not self._closing:
            await _pause(every)
            if self._closing:
                return
            try:
                stop = await self.saver.alease_renew(self.lease)
            except LeaseLostError as exc:
                self.preempt = exc
                return
            except Exception:
                # a transient storage error: try again. A driver may also turn the
                # cancellation sent by aclose() into an error of its own (psycopg does
                # when it interrupts the query): the flag ends the loop then.
                continue
            self._heard(stop)

    async def aclose(self, finished: bool) -> None:
        """Async twin of :meth:`close`."""
        import asyncio

        self._closing = True
        task = self._task
        if task is not None:
            task.cancel()
            try:
                await task
            except (Exception, asyncio.CancelledError):
                pass
        if isinstance(self.preempt, LeaseLostError):
            return
        try:
            await self.saver.alease_release(self.lease, finished=finished)
        except Exception:
            return  # as in close(): the lease expires after lease_timeout


async def _pause(seconds: float) -> None:
    """Sleep on the event loop's timer (not ``asyncio.sleep``, which programs and
    tests patch to observe *their* sleeps)."""
    import asyncio

    loop = asyncio.get_running_loop()
    done = loop.create_future()
    timer = loop.call_later(seconds, _wake, done)
    try:
        await done
    finally:
        timer.cancel()


def _wake(done: asyncio.Future[None]) -> None:
    # the waiting task may have been cancelled in the same loop iteration
    if not done.done():
        done.set_result(None)


class _Keeper:
    """One daemon thread per process renewing the leases of all sync runs when due
    (cheaper than a thread per run; async runs renew from an asyncio task)."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.due: dict[RunGuard, float] = {}
        self.thread: threading.Thread | None = None
        self.pid = 0

    def add(self, guard: RunGuard) -> None:
        import os

        with self.cond:
            self.due[guard] = time.monotonic() + guard.settings.renew_every
            if self.thread is None or self.pid != os.getpid():  # none yet, or forked
                self.pid = os.getpid()
                self.thread = threading.Thread(
                    target=self._run, name="stategraph-lease-heartbeat", daemon=True
                )
                self.thread.start()
            self.cond.notify()

    def remove(self, guard: RunGuard) -> None:
        with self.cond:
            self.due.pop(guard, None)

    def _run(self) -> None:
        while True:
            with self.cond:
                now = time.monotonic()
                ready = [g for g, at in self.due.items() if at <= now]
                for guard in ready:
                    self.due[guard] = now + guard.settings.renew_every
                if not ready:
                    wait = min(self.due.values()) - now if self.due else None
                    self.cond.wait(wait)
                    continue
            for guard in ready:
                if not guard.beat():
                    self.remove(guard)


_KEEPER = _Keeper()


class _Wait:
    """Book-keeping of one run waiting for its thread (shared by sync and async)."""

    def __init__(self, thread_id: str, settings: LeaseSettings, actor: str = "run") -> None:
        self.thread_id = thread_id
        self.settings = settings
        self.actor = actor
        strategy = settings.strategy
        self.stop = strategy if strategy in ("interrupt", "rollback") else None
        self.priority = PRIORITY_PREEMPT if self.stop is not None else PRIORITY_ENQUEUE
        self.stopped: list[int] = []
        wait = settings.enqueue_timeout
        self.deadline = None if wait is None else time.monotonic() + wait
        self.last: LeaseAttempt | None = None

    def saw(self, attempt: LeaseAttempt) -> None:
        self.last = attempt
        token = attempt.holder_token
        if self.stop == STOP_ROLLBACK and token is not None and token not in self.stopped:
            self.stopped.append(token)

    def expired(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline

    def busy(self, waited: bool) -> ThreadBusyError:
        holder = self.last.holder_run_id if self.last is not None else None
        who = f"run '{holder}'" if holder else "other runs queued before this one"
        if waited:
            return ThreadBusyError(
                f"Thread '{self.thread_id}' is still busy ({who}) after waiting "
                f"enqueue_timeout={self.settings.enqueue_timeout} s with "
                f"multitask_strategy='{self.settings.strategy}'. Nothing was saved by this "
                f"{self.actor}; raise enqueue_timeout or try again later.",
                thread_id=self.thread_id,
                holder_run_id=holder,
            )
        return ThreadBusyError(
            f"Thread '{self.thread_id}' is busy: {who} holds it, and this {self.actor} has "
            f"multitask_strategy='reject'. Nothing was saved by this {self.actor}. Wait for "
            "the other run, or pass multitask_strategy='enqueue' (wait your turn), "
            "'interrupt' or 'rollback' (stop the other run).",
            thread_id=self.thread_id,
            holder_run_id=holder,
        )


def _run_id(run: Any) -> str:
    return str(run.run_id) if run.run_id is not None else str(uuid.uuid4())


def acquire_sync(saver: Any, run: Any, settings: LeaseSettings, actor: str = "run") -> RunGuard:
    """Take the lease of ``run``'s thread per its strategy (blocking), roll back if
    asked, and start the heartbeat. ``run`` needs ``thread_id`` and ``run_id``;
    ``actor`` names it in errors ("run", "state update")."""
    thread_id = str(run.thread_id)
    run_id = _run_id(run)
    ttl = settings.lease_timeout
    state = _Wait(thread_id, settings, actor)
    attempt = saver.lease_acquire(thread_id, run_id, ttl, stop=state.stop)
    lease = attempt.lease
    if lease is None:
        state.saw(attempt)
        if settings.strategy == "reject":
            raise state.busy(waited=False)
        ticket = saver.lease_enqueue(thread_id, run_id, ttl, state.priority)
        try:
            while lease is None:
                if state.expired():
                    raise state.busy(waited=True)
                time.sleep(settings.poll_every)
                attempt = saver.lease_acquire(
                    thread_id, run_id, ttl, ticket=ticket, priority=state.priority, stop=state.stop
                )
                lease = attempt.lease
                if lease is None:
                    state.saw(attempt)
        except BaseException:
            saver.lease_dequeue(thread_id, ticket)
            raise
    guard = RunGuard(saver, lease, settings)
    try:
        if state.stopped:
            saver.lease_rollback(lease, state.stopped)
    except BaseException:
        saver.lease_release(lease, finished=True)
        raise
    guard.start_heartbeat()
    return guard


async def acquire_async(
    saver: Any, run: Any, settings: LeaseSettings, actor: str = "run"
) -> RunGuard:
    """Async twin of :func:`acquire_sync` (waits with ``asyncio.sleep``)."""
    import asyncio

    thread_id = str(run.thread_id)
    run_id = _run_id(run)
    ttl = settings.lease_timeout
    state = _Wait(thread_id, settings, actor)
    attempt = await saver.alease_acquire(thread_id, run_id, ttl, stop=state.stop)
    lease = attempt.lease
    if lease is None:
        state.saw(attempt)
        if settings.strategy == "reject":
            raise state.busy(waited=False)
        ticket = await saver.alease_enqueue(thread_id, run_id, ttl, state.priority)
        try:
            while lease is None:
                if state.expired():
                    raise state.busy(waited=True)
                await _pause(settings.poll_every)
                attempt = await saver.alease_acquire(
                    thread_id, run_id, ttl, ticket=ticket, priority=state.priority, stop=state.stop
                )
                lease = attempt.lease
                if lease is None:
                    state.saw(attempt)
        except BaseException:
            await asyncio.shield(saver.alease_dequeue(thread_id, ticket))
            raise
    guard = RunGuard(saver, lease, settings)
    try:
        if state.stopped:
            await saver.alease_rollback(lease, state.stopped)
    except BaseException:
        await saver.alease_release(lease, finished=True)
        raise
    guard.start_aheartbeat()
    return guard
