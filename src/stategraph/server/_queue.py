"""The durable run queue: the contract between the server and its queue backends.

The API process *enqueues* runs; worker loops (inside ``stategraph serve``, or in
``stategraph worker`` processes) *claim* them, keep the claim alive with
*heartbeats* while the graph runs, and *finish* them. Two backends implement
:class:`RunQueue`: SQLite (embedded, ``server/_sqlite_queue.py``) and PostgreSQL
(``server/_pgqueue/``, on a well-kept job library). The server, the workers and the
run executor use this protocol only, so the backends are interchangeable.

The queue is *not* the record of runs the API shows (status, metadata, timestamps:
``server/_records``); it decides only who runs what, when. Rules every backend keeps:

1. **One running run per thread.** :meth:`RunQueue.claim` never hands out a run whose
   thread already has a live (unexpired) claim, and runs of one thread are claimed in
   enqueue order (a later run never overtakes an earlier one of its thread, even one
   whose ``available_at`` is later). Runs without a thread (stateless) run in
   parallel freely; across threads, the oldest ``available_at`` goes first.
2. **Multitask strategies are decided atomically at enqueue time.** ``reject``
   raises :class:`ThreadBusy` when the thread has a pending or running run (and
   enqueues nothing); ``interrupt`` and ``rollback`` record a cancel request with that
   action on every pending or running run of the thread (pending ones are removed at
   once, running ones see it in their next heartbeat) and return their ids;
   ``enqueue`` just waits its turn. Check and insert are one transaction.
3. **Claims expire.** A claim lives ``lease_seconds`` after each heartbeat. A claim
   that is not renewed in time (the worker died or hung) makes the run claimable
   again, by any worker, with ``attempt`` one higher and a new ``token``; the executor
   then resumes the run from its last checkpoint. Calls made with a stale claim
   (:meth:`heartbeat`, :meth:`finish`, :meth:`release`) raise :class:`ClaimLost` and
   change nothing.
4. **Finished is final.** :meth:`finish` removes the run from the queue for good; a
   run is never claimed after it finished, so each run completes at most once.
5. **Wake-ups.** :meth:`wait` returns early when work may have arrived (an enqueue,
   a release, a finish that frees a thread, an expired claim), in any process that
   shares the queue (PostgreSQL: ``LISTEN/NOTIFY``; SQLite: in-process event plus a
   short poll of the file). Spurious wake-ups are allowed: the caller claims again.
6. **Cron ticks fire once.** :meth:`claim_tick` returns ``True`` for exactly one
   caller per ``(cron_id, tick)`` across all processes, so a schedule shared by many
   server processes starts each tick's run once.

Times are seconds since the epoch (``time.time()``), floats. ``kwargs`` is a JSON
object (only JSON types): everything the executor needs to start the run (input or
command, config, context, stream modes, interrupt_before/after, webhook, ...); the
queue stores it and hands it back unchanged, it never looks inside.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

__all__ = [
    "MultitaskStrategy",
    "CancelAction",
    "FinalStatus",
    "MULTITASK_STRATEGIES",
    "CANCEL_ACTIONS",
    "FINAL_STATUSES",
    "QueuedRun",
    "Claim",
    "Beat",
    "Enqueued",
    "CancelOutcome",
    "ThreadBusy",
    "ClaimLost",
    "RunQueue",
]

MultitaskStrategy = Literal["reject", "interrupt", "rollback", "enqueue"]
"""What a new run does when its thread has a pending or running run."""
CancelAction = Literal["interrupt", "rollback"]
"""How a running run is stopped: keep what it saved, or delete it (and its checkpoints)."""
FinalStatus = Literal["success", "error", "timeout", "interrupted"]
"""How a run ended (LangGraph Server's run statuses, minus ``pending``/``running``)."""

MULTITASK_STRATEGIES: tuple[str, ...] = ("reject", "interrupt", "rollback", "enqueue")
CANCEL_ACTIONS: tuple[str, ...] = ("interrupt", "rollback")
FINAL_STATUSES: tuple[str, ...] = ("success", "error", "timeout", "interrupted")


@dataclass(frozen=True)
class QueuedRun:
    """A run as the queue stores it (what :meth:`RunQueue.enqueue` takes)."""

    run_id: str
    thread_id: str | None
    """``None`` for a stateless run (no thread, no per-thread ordering)."""
    assistant_id: str
    kwargs: Mapping[str, Any]
    """JSON object handed back to the executor unchanged."""
    multitask_strategy: MultitaskStrategy = "reject"
    available_at: float = 0.0
    """Epoch seconds before which the run is not claimed (``0``: at once)."""


@dataclass(frozen=True)
class Claim:
    """A worker's right to execute one run, until ``expires_at`` unless renewed."""

    run: QueuedRun
    worker_id: str
    attempt: int
    """1 for the first claim of the run, +1 each time an expired claim is taken over."""
    token: int
    """Grows with each claim of this run: heartbeats/finishes of older claims are refused."""
    expires_at: float
    cancel: CancelAction | None = None
    """A cancel request recorded before this claim (e.g. the previous worker died after
    the request): the executor finishes the run at once as cancelled."""


@dataclass(frozen=True)
class Beat:
    """What a heartbeat learned."""

    expires_at: float
    cancel: CancelAction | None = None
    """A cancel request made since the claim (by :meth:`RunQueue.cancel` or a new run's
    ``interrupt``/``rollback`` strategy): the executor stops the run and finishes it."""


@dataclass(frozen=True)
class Enqueued:
    """The answer of :meth:`RunQueue.enqueue`."""

    cancelled: Sequence[str] = field(default_factory=tuple)
    """Run ids of the thread's runs that the ``interrupt``/``rollback`` strategy asked
    to stop (running ones) or removed (pending ones)."""
    removed: Sequence[str] = field(default_factory=tuple)
    """The subset of ``cancelled`` that was still pending: removed from the queue,
    never to run (the server marks them ``interrupted``, or deletes them on rollback)."""


@dataclass(frozen=True)
class CancelOutcome:
    """The answer of :meth:`RunQueue.cancel`."""

    state: Literal["removed", "requested", "absent"]
    """``removed``: it was pending and will never run; ``requested``: it is running and
    sees the request in its next heartbeat; ``absent``: finished or unknown."""


class ThreadBusy(Exception):
    """``multitask_strategy="reject"`` and the thread has a pending or running run."""

    def __init__(self, thread_id: str, run_ids: Sequence[str]) -> None:
        self.thread_id = thread_id
        self.run_ids = tuple(run_ids)
        super().__init__(
            f"Thread '{thread_id}' is busy with run(s) {', '.join(self.run_ids)}: "
            "multitask_strategy='reject' refuses a second run. Wait for it, cancel it, or "
            "use multitask_strategy 'enqueue', 'interrupt' or 'rollback'."
        )


class ClaimLost(Exception):
    """The claim expired and was taken over (or the run finished): stop, change nothing."""

    def __init__(self, run_id: str, token: int, why: str) -> None:
        self.run_id = run_id
        self.token = token
        super().__init__(f"Run '{run_id}' (claim token {token}): {why}.")


@runtime_checkable
class RunQueue(Protocol):
    """A durable run queue shared by every server and worker process of a deployment.

    All methods are coroutines and safe to call concurrently from many tasks and
    processes. See the module docstring for the rules.
    """

    async def setup(self) -> None:
        """Create the queue's tables (idempotent; safe to race across processes)."""
        ...

    async def aclose(self) -> None:
        """Release connections and wake every :meth:`wait` of this object."""
        ...

    async def enqueue(self, run: QueuedRun) -> Enqueued:
        """Add ``run`` (pending until ``run.available_at``), applying its multitask
        strategy atomically (rule 2). Raises :class:`ThreadBusy` (``reject``) or
        ``ValueError`` for a duplicate ``run_id`` or an unknown strategy."""
        ...

    async def claim(self, worker_id: str, lease_seconds: float) -> Claim | None:
        """Claim the next runnable run, or ``None`` when none is runnable now.

        Runnable: the first run of its thread in enqueue order (or threadless), and
        pending with ``available_at <= now``, or claimed but expired (rule 3). Oldest
        ``available_at`` first, then enqueue order."""
        ...

    async def heartbeat(self, claim: Claim, lease_seconds: float) -> Beat:
        """Extend the claim to now + ``lease_seconds``; report a cancel request.
        Raises :class:`ClaimLost` when the claim is no longer the run's live claim."""
        ...

    async def finish(self, claim: Claim, status: FinalStatus) -> None:
        """The run ended with ``status``: remove it for good, free its thread.
        Raises :class:`ClaimLost` (and changes nothing) for a stale claim."""
        ...

    async def release(self, claim: Claim, delay: float = 0.0) -> None:
        """Give the run back unfinished (worker shutting down, retry later): pending
        again from now + ``delay``, keeping its place ahead of later runs of its thread.
        Raises :class:`ClaimLost` for a stale claim."""
        ...

    async def cancel(self, run_id: str, action: CancelAction) -> CancelOutcome:
        """Stop a run: remove it if pending, else record the request for its worker."""
        ...

    async def delete(self, run_id: str) -> None:
        """Forget ``run_id`` whatever its state (a deleted run or thread); a running
        run's claim becomes stale (its worker gets :class:`ClaimLost`)."""
        ...

    async def pending(self, thread_id: str) -> Sequence[str]:
        """Run ids of the thread's pending and running runs, in claim order."""
        ...

    async def wait(self, timeout: float) -> None:
        """Sleep until work may have arrived (rule 5) or ``timeout`` seconds passed."""
        ...

    async def claim_tick(self, cron_id: str, tick: float) -> bool:
        """``True`` for exactly one caller per ``(cron_id, tick)`` (rule 6)."""
        ...
