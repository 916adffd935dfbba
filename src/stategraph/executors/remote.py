"""What the Ray and Dask executors share: futures, stream routing, errors.

An engine subclass says how to start one payload on its cluster, how to learn that it
finished, how to cancel it, how to read the stream channel, and which of its errors
mean that the worker died. Everything else (one future per attempt that completes
after the attempt's chunks were delivered, cancellation, clear errors for payloads
that cannot be pickled) is here once.
"""

from __future__ import annotations

import concurrent.futures
import threading
import uuid
from abc import abstractmethod
from collections.abc import Callable
from typing import Any

from stategraph.executors.base import Emit, TaskExecutor, TaskPayload, TaskResult, WorkerLostError
from stategraph.executors.streams import ChunkRouter

__all__ = ["RemoteExecutor", "numbered"]

_PARTS = {
    "call": "node function",
    "input": "input",
    "config": "config",
    "runtime": "runtime context",
    "scratchpad": "interrupt answers",
    "store": "store",
}

Done = Callable[[TaskResult | None, BaseException | None], None]


def numbered(put: Callable[[tuple[str, int, Any]], None], key: str) -> Emit:
    """A worker-side ``emit`` that tags each chunk with ``key`` and its sequence number."""
    seq = 0

    def emit(chunk: Any) -> None:
        nonlocal seq
        put((key, seq, chunk))
        seq += 1

    return emit


class RemoteExecutor(TaskExecutor):
    """Base of executors that run payloads in other processes (Ray, Dask)."""

    def __init__(self) -> None:
        self._router: ChunkRouter | None = None
        self._router_lock = threading.Lock()

    # ---------------------------------------------------------------- engine hooks
    @abstractmethod
    def _start(self, payload: TaskPayload, key: str | None) -> Any:
        """Start ``payload`` on the cluster (``key``: its stream key, None if it does not
        stream); return the engine's handle. May raise if the payload cannot be sent."""

    @abstractmethod
    def _watch(self, handle: Any, done: Done) -> None:
        """Call ``done(result, None)`` or ``done(None, error)`` when ``handle`` finishes."""

    @abstractmethod
    def _cancel(self, handle: Any) -> None:
        """Stop the attempt behind ``handle`` (best effort)."""

    @abstractmethod
    def _receive(self, timeout: float) -> list[tuple[str, int, Any]]:
        """Read stream chunks from the channel, waiting at most ``timeout`` seconds."""

    @abstractmethod
    def _lost_worker(self, error: BaseException) -> str | None:
        """If ``error`` means the worker died, a description of that worker."""

    # ---------------------------------------------------------------- protocol
    def submit(
        self, payload: TaskPayload, emit: Emit | None = None
    ) -> concurrent.futures.Future[TaskResult]:
        """Start one attempt on the cluster; see :meth:`TaskExecutor.submit`."""
        outer: concurrent.futures.Future[TaskResult] = concurrent.futures.Future()
        key: str | None = None
        router = None
        if emit is not None and payload.streams:
            key = f"{payload.task_id}:{payload.attempt}:{uuid.uuid4().hex}"
            router = self._chunks()
            router.open(key, emit, outer)
        try:
            handle = self._start(payload, key)
        except Exception as exc:
            if router is not None and key is not None:
                router.fail(key, exc)
            raise _unsendable(payload, exc, self.kind) from exc

        def done(result: TaskResult | None, error: BaseException | None) -> None:
            if outer.done():
                return
            if error is not None:
                error = self._translate(payload, error)
                if router is not None and key is not None:
                    router.fail(key, error)
                else:
                    _settle(outer, None, error)
                return
            assert result is not None
            if router is not None and key is not None:
                router.finish(key, result)
            else:
                _settle(outer, result, None)

        def cancelled(fut: concurrent.futures.Future[TaskResult]) -> None:
            if fut.cancelled():
                if router is not None and key is not None:
                    router.fail(key, concurrent.futures.CancelledError())
                self._cancel(handle)

        outer.add_done_callback(cancelled)
        self._watch(handle, done)
        return outer

    def _translate(self, payload: TaskPayload, error: BaseException) -> BaseException:
        worker = self._lost_worker(error)
        if worker is not None:
            detail = str(error).strip().splitlines()[0] if str(error).strip() else ""
            lost = WorkerLostError(payload.node, worker, detail)
            lost.__cause__ = error
            return lost
        return error

    def _chunks(self) -> ChunkRouter:
        with self._router_lock:
            if self._router is None:
                self._router = ChunkRouter(self._receive, f"stategraph-{self.kind.lower()}-chunks")
            return self._router

    def close(self) -> None:
        """Stop the stream pump; subclasses also release their cluster connection."""
        with self._router_lock:
            router, self._router = self._router, None
        if router is not None:
            router.close()


def _settle(
    fut: concurrent.futures.Future[TaskResult],
    result: TaskResult | None,
    error: BaseException | None,
) -> None:
    try:
        if error is not None:
            fut.set_exception(error)
        else:
            fut.set_result(result)  # type: ignore[arg-type]
    except concurrent.futures.InvalidStateError:  # cancelled meanwhile
        pass


def _unsendable(payload: TaskPayload, error: Exception, kind: str) -> TypeError:
    """A clear error for a payload the engine could not serialize, naming the part."""
    part = "payload"
    try:
        import cloudpickle

        for name, label in _PARTS.items():
            try:
                cloudpickle.dumps(getattr(payload, name))
            except Exception:
                part = label
                break
    except ImportError:
        pass
    return TypeError(
        f"Node '{payload.node}' cannot be sent to the {kind} cluster: its {part} cannot be "
        f"serialized ({type(error).__name__}: {error}). Everything a remote task needs "
        "(node function, input, config, context) must be picklable; make it so, or run "
        "this graph without a remote executor."
    )
