"""A run finalized on a saver thread never waits for a saver thread.

The garbage collector may close an abandoned ``stream()`` on whatever thread allocates
at that moment, including the background thread of another run's saver, in the middle
of a saver call that holds the saver's lock. Closing the abandoned run's saver there
must not wait for that run's pending calls: they may need the very lock the finalizing
thread holds (seen as a hang at interpreter exit under tools/stress_abandon.py).
"""

from __future__ import annotations

import threading
from typing import Any

from stategraph.pregel._effects import PutWrites
from stategraph.pregel._sync_shell import _Saver


class LockedSaver:
    """A saver whose every call takes one shared lock (as InMemorySaver does)."""

    def __init__(
        self, lock: threading.Lock, on_call: Any = None, before: threading.Event | None = None
    ) -> None:
        self.lock = lock
        self.on_call = on_call
        self.before = before
        self.calls: list[str] = []

    def put_writes(self, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
        if self.before is not None:
            self.before.wait(5)
        with self.lock:
            self.calls.append(task_id)
            if self.on_call is not None:
                self.on_call()


def test_closing_another_runs_saver_on_a_saver_thread_does_not_wait() -> None:
    lock = threading.Lock()
    active_holds_lock = threading.Event()
    # the abandoned run's queued call asks for the lock only once the active run's
    # saver thread holds it (the order that hangs)
    abandoned = _Saver(LockedSaver(lock, before=active_holds_lock))
    closed = threading.Event()

    def finalize_abandoned_run() -> None:
        active_holds_lock.set()
        # what the collector does on this thread: close the abandoned run's saver,
        # while this call holds the lock the abandoned run's pending call needs
        abandoned.close()
        closed.set()

    active = _Saver(LockedSaver(lock, on_call=finalize_abandoned_run))
    # the abandoned run has a call queued that will wait for the lock ...
    abandoned.perform(PutWrites({}, [], "abandoned-call", "", False), blocking=False)
    # ... and the active run's saver thread takes the lock and finalizes that run
    active.perform(PutWrites({}, [], "active-call", "", False), blocking=False)
    assert closed.wait(5), "closing the abandoned run's saver waited for a saver thread"
    done = threading.Thread(target=active.close)
    done.start()
    done.join(5)
    assert not done.is_alive()
    # the abandoned run's queued call still ran, after the lock was free
    for _ in range(500):
        if abandoned.saver.calls:
            break
        threading.Event().wait(0.01)
    assert abandoned.saver.calls == ["abandoned-call"]
    assert active.saver.calls == ["active-call"]


def test_a_saver_closed_on_an_ordinary_thread_still_waits_for_its_calls() -> None:
    lock = threading.Lock()
    saver = _Saver(LockedSaver(lock))
    saver.perform(PutWrites({}, [], "queued", "", False), blocking=False)
    saver.close()
    # close() on a non-saver thread flushes: the call is done when it returns
    assert saver.saver.calls == ["queued"]
    assert saver.thread is None
