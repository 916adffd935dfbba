"""What a worker does with a :class:`~stategraph.executors.base.TaskPayload`.

:func:`run_payload` sets up the same task context a local node sees (config, runtime,
stream writer, store, interrupt bookkeeping), calls the node once and packs what
happened into a :class:`~stategraph.executors.base.TaskResult`. Every executor runs
payloads through it, so a node behaves the same on threads, Ray and Dask.
"""

from __future__ import annotations

import asyncio
import os
import pickle
import socket
import traceback
from typing import Any

from stategraph._context import CURRENT_TASK, TaskContext
from stategraph.executors.base import Emit, Heartbeat, TaskPayload, TaskResult

__all__ = ["RemoteTaskError", "run_payload", "worker_name"]


class RemoteTaskError(Exception):
    """A node failed on a worker with an exception that cannot travel back (unpicklable).

    The message carries the original exception's type, message and remote traceback.
    """


def worker_name() -> str:
    """``pid <pid> on <host>``: names the process a task ran in."""
    return f"pid {os.getpid()} on {socket.gethostname()}"


def run_payload(
    payload: TaskPayload, emit: Emit | None = None, worker: str = "", portable: bool = True
) -> TaskResult:
    """Run one attempt of the task in ``payload`` in this process and report the outcome.

    ``emit`` receives the node's ``custom`` stream chunks as it writes them (only when
    the caller streams that mode). Exceptions raised by the node, interrupts included,
    are returned in :attr:`TaskResult.error`, not raised; with ``portable`` (the result
    travels to another process) an exception that cannot be pickled is replaced by a
    :class:`RemoteTaskError` carrying its text.
    """
    writes: list[tuple[str, Any]] = []
    emitted = 0

    def send(items: list[tuple[str, Any]]) -> None:
        writes.extend(items)

    def writer(chunk: Any) -> None:
        nonlocal emitted
        if emit is not None and payload.streams:
            emitted += 1
            emit(chunk)

    store = payload.store.open() if payload.store is not None else None
    runtime = payload.runtime.override(stream_writer=writer, store=store)
    if emit is not None and payload.streams:
        runtime = runtime.override(heartbeat=lambda: writer(Heartbeat()))
        if payload.idle_timeout is not None:
            writer(Heartbeat())
    config = payload.config
    ctx = TaskContext(
        make_config=lambda: config,
        config=config,
        runtime=runtime,
        scratchpad=payload.scratchpad,
        send=send,
        checkpoint_ns=payload.checkpoint_ns,
        task_name=payload.node,
        task_id=payload.task_id,
        stream_writer=writer,
        first_attempt_time=payload.first_attempt_time,
    )
    ctx.attempt = payload.attempt
    result = TaskResult(writes=writes, scratchpad=payload.scratchpad, worker=worker)
    token = CURRENT_TASK.set(ctx)
    try:
        output = payload.call(payload.input, ctx)
        if payload.is_async:
            output = asyncio.run(output)
        result.output = output
    except Exception as exc:
        result.error = _portable(exc) if portable else exc
    finally:
        CURRENT_TASK.reset(token)
    result.emitted = emitted
    return result


def _portable(exc: Exception) -> BaseException:
    """``exc`` if it survives pickling, else a :class:`RemoteTaskError` describing it."""
    try:
        import cloudpickle

        dumps: Any = cloudpickle.dumps
    except ImportError:
        dumps = pickle.dumps
    try:
        pickle.loads(dumps(exc))
    except Exception:
        text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        return RemoteTaskError(
            f"{type(exc).__qualname__}: {exc} (the exception cannot be pickled, so it is "
            f"reported as text; remote traceback follows)\n{text}"
        )
    return exc
