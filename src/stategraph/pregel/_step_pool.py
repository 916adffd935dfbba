"""Worker threads for the steps of synchronous runs, kept from one run to the next.

A step with several tasks runs them on a :class:`Crew`: worker threads that take jobs
from one :class:`queue.SimpleQueue` and run them; a job reports its own end (the sync
shell's jobs put themselves on the step's queue of finished tasks). Nothing else goes
between the caller and a worker: no future, no lock, no condition per task.

Starting threads costs more CPU than a short run spends on its own work, so a run
borrows an idle crew of the size it needs, and gives it back when it ends with none of
its jobs still running; the next run of that size reuses the threads. A crew serves one
run at a time (a subgraph running inside a task borrows a crew of its own), so runs
never wait for each other's tasks, and a run's concurrency is exactly that of a crew
made for it. A crew starts its threads as the run's unfinished jobs outnumber them, up
to its size.

Rules that keep every run ending:

* The module holds a strong reference to every crew it lends: a run abandoned part-way
  and freed by the cyclic garbage collector still finds its crew when its ``finally``
  gives it back.
* A crew is checked before it is kept or reused: one that was stopped, or one whose
  threads have died (a forked child has none of its parent's threads), is dropped,
  never lent. While a step waits for its jobs it checks the same, and stops the run
  with an error instead of waiting for a job no thread will finish.
* A finalizer may run on any thread (the collector runs wherever an allocation triggers
  it), so a run closed by the garbage collector, or from one of its crew's own threads,
  never waits for its crew's threads: it stops the crew without waiting (jobs not
  started yet are dropped). A run closed by its caller (``stream.close()``, or the last
  reference dropped) waits for the jobs it handed over.
* Worker threads are daemon threads, so an idle crew never keeps the interpreter from
  exiting; at exit (``atexit``) every crew is stopped once the jobs handed to it have
  ended, as the standard library's executors do, and no run waits for a crew after
  that. (A run on a thread that outlives the main thread keeps its crew serving: the
  ``atexit`` hooks run only once every non-daemon thread has ended.)
"""

from __future__ import annotations

import atexit
import gc
import os
import queue
import threading
from typing import Protocol

__all__ = [
    "Crew",
    "Job",
    "StepPool",
    "borrow",
    "collecting",
    "give_back",
    "idle_pools",
    "lent_pools",
    "retire",
]

_KEEP = 8
"""Idle crews kept at most (the least recently returned ones are stopped)."""


class Job(Protocol):
    """Work for a crew's thread."""

    def run(self) -> None:
        """Do the work and report its end; called on a worker thread, must not raise
        (an exception escaping it ends the thread, which the run then sees as lost)."""


def _serve(inbox: queue.SimpleQueue[Job | None]) -> None:
    """A worker thread's life: run jobs from ``inbox`` until it hands over ``None``."""
    get = inbox.get
    while True:
        job = get()
        if job is None:
            return
        job.run()
        job = None  # no reference to a finished job while waiting for the next one


class Crew:
    """Worker threads running jobs from one queue, started on demand up to ``size``."""

    __slots__ = ("inbox", "size", "stopped", "threads")

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"a crew needs at least one thread, not {size}")
        self.size = size
        self.inbox: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        self.threads: list[threading.Thread] = []
        self.stopped = False

    def submit(self, job: Job, unfinished: int) -> None:
        """Queue ``job``; ``unfinished`` counts the run's jobs not known to have ended,
        this one included: a thread is started while they outnumber the threads.

        An interpreter that refuses new threads (Python 3.12 and later once the main
        thread has ended, while other threads still run) leaves a crew with no thread
        to run ``job``: it then runs on the calling thread, before this returns (the
        step's tasks run one after the other, as with one worker)."""
        if self.stopped:
            raise RuntimeError("this crew was stopped: it runs no more jobs")
        threads = self.threads
        if len(threads) < unfinished and len(threads) < self.size:
            thread = threading.Thread(
                target=_serve,
                args=(self.inbox,),
                name=f"stategraph-step_{len(threads)}",
                daemon=True,
            )
            try:
                thread.start()
            except RuntimeError:
                if not any(t.is_alive() for t in threads):
                    job.run()
                    return
            else:
                threads.append(thread)
        self.inbox.put(job)

    def serving(self) -> bool:
        """Whether the crew runs what it is given: not stopped, every thread alive."""
        return not self.stopped and all(t.is_alive() for t in self.threads)

    def stop(self, *, wait: bool) -> None:
        """Stop the threads for good. With ``wait``, every job handed over runs and
        this returns when they have ended (never waiting for the calling thread
        itself); without, jobs not started yet are dropped and running ones finish
        on their own."""
        self.stopped = True
        inbox = self.inbox
        while not wait:
            try:
                inbox.get_nowait()
            except queue.Empty:
                break
        for _ in self.threads:
            inbox.put(None)
        if wait:
            me = threading.current_thread()
            for thread in self.threads:
                if thread is not me:
                    thread.join()


_lock = threading.Lock()
_idle: list[Crew] = []
_lent: dict[int, Crew] = {}
"""Crews lent to runs, by ``id``: strong references the collector cannot clear."""
_pid = os.getpid()
_exiting = False
"""Set at interpreter exit, once every crew was stopped: no run waits for a crew then."""


def _forget_after_fork() -> None:
    """A forked child has none of its parent's worker threads: drop their crews."""
    global _lock, _pid
    _lock = threading.Lock()
    _idle.clear()
    _lent.clear()
    _pid = os.getpid()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)


def _stop_all_at_exit() -> None:
    """Stop every crew once the jobs handed to it have ended (later closes never wait)."""
    global _exiting
    with _lock:
        crews = [*_idle, *_lent.values()]
        _idle.clear()
        _lent.clear()
        _exiting = True
    for crew in crews:
        crew.stop(wait=True)


atexit.register(_stop_all_at_exit)

_collector = threading.local()


def _note_collection(phase: str, info: dict[str, int]) -> None:
    _collector.active = phase == "start"


gc.callbacks.append(_note_collection)


def collecting() -> bool:
    """Whether the current thread is inside a run of the cyclic garbage collector
    (finalizers of cyclic garbage run there, on whichever thread triggered it)."""
    return getattr(_collector, "active", False)


def borrow(workers: int) -> Crew:
    """An idle crew of ``workers`` threads at most (a new one when none is idle)."""
    broken: list[Crew] = []
    crew = None
    with _lock:
        for i in range(len(_idle) - 1, -1, -1):
            if _idle[i].size == workers:
                candidate = _idle.pop(i)
                if candidate.serving():
                    crew = candidate
                    break
                broken.append(candidate)
        if crew is None:
            crew = Crew(workers)
        _lent[id(crew)] = crew
    for dead in broken:
        dead.stop(wait=False)
    return crew


def give_back(crew: Crew) -> None:
    """Return a borrowed crew with no job running or queued, for later runs."""
    evicted = None
    with _lock:
        _lent.pop(id(crew), None)
        if os.getpid() != _pid or _exiting or not crew.serving():
            evicted = crew
        else:
            _idle.append(crew)
            if len(_idle) > _KEEP:
                evicted = _idle.pop(0)
    if evicted is not None:
        evicted.stop(wait=False)


def retire(crew: Crew, *, wait: bool) -> None:
    """Stop a borrowed crew for good (its jobs are still running, or a step gave up on
    them); with ``wait`` the running jobs finish first."""
    with _lock:
        _lent.pop(id(crew), None)
    crew.stop(wait=wait and not _exiting)


def idle_pools() -> int:
    """How many crews are idle, waiting for a run."""
    with _lock:
        return len(_idle)


def lent_pools() -> int:
    """How many crews are lent to runs that have not given them back."""
    with _lock:
        return len(_lent)


class StepPool:
    """The crew of one run: borrowed at its first step with several tasks."""

    __slots__ = ("crew", "inflight")

    def __init__(self) -> None:
        self.crew: Crew | None = None
        # jobs submitted whose end the run has not processed yet
        self.inflight = 0

    def get(self, workers: int) -> Crew:
        """The run's crew; ``workers`` sizes it when it is borrowed (first call)."""
        crew = self.crew
        if crew is None:
            crew = self.crew = borrow(workers)
        return crew

    def submit(self, job: Job) -> None:
        """Hand ``job`` to the run's crew (borrowed by :meth:`get` before)."""
        crew = self.crew
        if crew is None:
            raise RuntimeError("StepPool.submit before StepPool.get: the run has no crew")
        self.inflight += 1
        crew.submit(job, self.inflight)

    def ended(self) -> None:
        """Note that the run processed the end of one submitted job."""
        self.inflight -= 1

    def serving(self) -> bool:
        """Whether the run's crew still runs the jobs handed to it."""
        crew = self.crew
        return crew is not None and crew.serving()

    def abandon(self) -> None:
        """Leave the crew to its running threads (they cannot be stopped): a step timed
        out or its jobs were lost. Queued jobs are dropped; the crew is never reused."""
        crew, self.crew = self.crew, None
        if crew is not None:
            retire(crew, wait=False)

    def close(self, *, wait: bool = True) -> None:
        """End of the run: give the crew back when idle, else stop it (the run stopped
        during a step), waiting for its running jobs when ``wait``.

        Never waits when called by the garbage collector (a dropped run finalized on
        whichever thread the collection ran) or from one of the crew's own threads:
        waiting there could stall an unrelated run, or a thread could join itself."""
        crew, self.crew = self.crew, None
        if crew is None:
            return
        if self.inflight == 0:
            give_back(crew)
        else:
            retire(crew, wait=wait and not collecting() and not _is_worker_of(crew))


def _is_worker_of(crew: Crew) -> bool:
    """Whether the current thread is one of ``crew``'s workers (it must not wait for
    the crew: it would wait for itself)."""
    return threading.current_thread() in crew.threads
