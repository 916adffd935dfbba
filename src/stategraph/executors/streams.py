"""Custom stream chunks from remote tasks, delivered to the caller while tasks run.

A worker sends each chunk through the engine's channel (a Ray actor, a Dask queue)
tagged with its task key. One pump thread in the caller's process receives them and
hands each to the ``emit`` of its task, in the order the task wrote them. A task's
future completes only once every chunk it reported (``TaskResult.emitted``) has been
delivered, so a node's chunks always reach the stream before its update.
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Callable
from typing import Any

from stategraph.executors.base import Emit, TaskResult

__all__ = ["ChunkRouter"]


class _Slot:
    __slots__ = ("delivered", "emit", "expected", "future", "held", "key", "result")

    def __init__(self, key: str, emit: Emit, future: concurrent.futures.Future[TaskResult]) -> None:
        self.key = key
        self.emit = emit
        self.future = future
        self.delivered = 0
        self.expected: int | None = None
        self.result: TaskResult | None = None
        # chunks that arrived ahead of an earlier one (by sequence number)
        self.held: dict[int, Any] = {}


class ChunkRouter:
    """Routes ``(key, seq, chunk)`` triples to the tasks waiting for them.

    ``receive(timeout)`` is the engine's blocking read of its channel (returns a list of
    ``(key, seq, chunk)`` triples, possibly empty; ``seq`` numbers a task's chunks from
    0, so chunks the channel reorders are put back in order). The pump thread starts
    with the first task that streams and stops at :meth:`close`.
    """

    def __init__(self, receive: Callable[[float], list[tuple[str, int, Any]]], name: str) -> None:
        self._receive = receive
        self._name = name
        self._lock = threading.Lock()
        self._slots: dict[str, _Slot] = {}
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._busy = threading.Event()
        self.error: BaseException | None = None

    def open(self, key: str, emit: Emit, future: concurrent.futures.Future[TaskResult]) -> None:
        """Expect chunks for ``key`` (call before submitting the attempt; keys are unique
        per attempt); ``future`` completes once they all arrived."""
        with self._lock:
            self._slots[key] = _Slot(key, emit, future)
            self._busy.set()
            if self._thread is None:
                self._thread = threading.Thread(target=self._pump, name=self._name, daemon=True)
                self._thread.start()

    def finish(self, key: str, result: TaskResult) -> None:
        """The attempt for ``key`` returned ``result``: complete it when its chunks are in."""
        with self._lock:
            slot = self._slots.get(key)
            if slot is None:
                return
            slot.expected = result.emitted
            slot.result = result
            ready = slot.delivered >= result.emitted
            if ready:
                del self._slots[key]
        if ready and not slot.future.done():
            slot.future.set_result(result)

    def fail(self, key: str, error: BaseException) -> None:
        """The attempt for ``key`` could not finish: fail its future now."""
        with self._lock:
            slot = self._slots.pop(key, None)
        if slot is not None and not slot.future.done():
            slot.future.set_exception(error)

    def _deliver(self, slot: _Slot, seq: int, chunk: Any) -> None:
        """Emit ``chunk`` (and the held ones after it) if it is the next one in order."""
        if seq != slot.delivered:
            slot.held[seq] = chunk
            return
        while True:
            try:
                slot.emit(chunk)
            finally:
                with self._lock:
                    slot.delivered += 1
                    done = slot.expected is not None and slot.delivered >= slot.expected
                    if done:
                        self._slots.pop(slot.key, None)
            if done and slot.result is not None and not slot.future.done():
                slot.future.set_result(slot.result)
            if slot.delivered not in slot.held:
                return
            chunk = slot.held.pop(slot.delivered)

    def _pump(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                if not self._slots:
                    self._busy.clear()
            if not self._busy.wait(0.5):
                continue
            try:
                items = self._receive(0.2)
            except BaseException as exc:  # the channel is gone (cluster shut down)
                if self._stop.is_set():
                    return
                self.error = exc
                with self._lock:
                    slots, self._slots = list(self._slots.values()), {}
                for lost in slots:
                    if not lost.future.done():
                        lost.future.set_exception(exc)
                return
            for key, seq, chunk in items:
                with self._lock:
                    slot = self._slots.get(key)
                if slot is not None:  # else: an attempt nobody waits for any more
                    self._deliver(slot, seq, chunk)

    def close(self) -> None:
        """Stop the pump thread (pending tasks are left as they are)."""
        self._stop.set()
        self._busy.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)
        self._thread = None
