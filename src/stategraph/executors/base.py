"""The executor protocol: where the node calls of a run's tasks execute.

A run's loop always stays in the process that started it. For each attempt of a task
it hands the executor a :class:`TaskPayload` (the node function, its input, the config
it needs, its interrupt answers) and gets back a :class:`TaskResult` (the node's
output, the writes it made while running, or its error). The loop then applies the
result exactly as for a task it ran itself, so results, checkpoints and task ids do
not depend on where the node ran.

Three implementations: :class:`~stategraph.executors.ThreadExecutor` (the default: the
caller's own threads), :class:`~stategraph.executors.ray.RayExecutor` and
:class:`~stategraph.executors.dask.DaskExecutor`. Nothing here imports the runtime.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

__all__ = [
    "Emit",
    "Heartbeat",
    "TaskExecutor",
    "TaskPayload",
    "TaskResult",
    "WorkerLostError",
    "check_executor",
]

Emit = Callable[[Any], None]
"""Receives the ``custom`` stream chunks a remote task writes, in the order written."""


class Heartbeat:
    """Sent on a task's chunk channel when the node calls ``runtime.heartbeat()``.

    The caller's side turns it back into a heartbeat (progress for the node's
    ``TimeoutPolicy.idle_timeout``); it never reaches the stream.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return "Heartbeat()"


@dataclass(slots=True)
class TaskPayload:
    """Everything one attempt of one task needs, and nothing of the run around it.

    ``call(input, ctx)`` is the compiled node function (it reads ``config``, ``runtime``,
    ``writer`` or ``store`` from ``ctx`` as the node asked at compile time). ``runtime``
    is the run's ``Runtime`` without the process-bound parts (store, writer, control);
    ``store`` is a handle the worker reopens the store from (or one whose every use
    explains why the store cannot be reached). ``scratchpad`` carries the interrupt
    answers the task already has and those offered to it by this run's resume value.
    With ``streams``, the node's ``custom`` chunks and heartbeats travel back while it
    runs (the caller streams ``custom``, or the node has an idle timeout).
    """

    task_id: str
    node: str
    call: Callable[[Any, Any], Any]
    input: Any
    config: dict[str, Any]
    runtime: Any
    scratchpad: Any
    checkpoint_ns: str
    attempt: int = 1
    first_attempt_time: float | None = None
    is_async: bool = False
    streams: bool = False
    store: Any = None
    idle_timeout: float | None = None
    """The node's idle limit, if any: the worker then sends a heartbeat when the node
    starts, so time spent waiting for a free worker does not count as idle."""


@dataclass(slots=True)
class TaskResult:
    """What came back from one attempt: the output or the error, plus side writes.

    ``writes`` are the ``(channel, value)`` pairs the node sent while it ran (its
    interrupt answers); ``emitted`` counts the ``custom`` chunks it wrote; ``scratchpad``
    is the task's interrupt bookkeeping after the attempt (answers it did not use go
    back to the run); ``worker`` names where it ran.
    """

    output: Any = None
    error: BaseException | None = None
    writes: list[tuple[str, Any]] = field(default_factory=list)
    emitted: int = 0
    scratchpad: Any = None
    worker: str = ""


class WorkerLostError(Exception):
    """The worker process running a task died (killed, out of memory, node lost).

    Not a ``RuntimeError``, so the default ``RetryPolicy`` retries it; with no policy
    (or once the attempts are used up) the run fails with this error. The task's writes
    were not saved, so a resumed run runs it again; finished tasks never run again.
    """

    def __init__(self, node: str, worker: str, detail: str = "") -> None:
        self.node = node
        self.worker = worker
        message = f"The worker running node '{node}' died before the task finished ({worker})."
        if detail:
            message += f" {detail}"
        super().__init__(message)

    def __reduce__(self) -> Any:
        return (type(self), (self.node, self.worker))


class TaskExecutor(ABC):
    """Runs the node calls of a graph's tasks; the loop stays with the caller.

    ``submit`` starts one attempt and returns a ``concurrent.futures.Future`` of its
    :class:`TaskResult`; the future completes only after every chunk the task wrote
    reached ``emit``. Failures of the node itself come back in
    ``TaskResult.error``; the future fails only when the attempt could not run (the
    payload could not be sent, the worker died: :class:`WorkerLostError`).

    Executors whose :attr:`in_process` is true run nodes in the caller's process: the
    runtime then calls nodes directly on its own threads (no payload is built).
    """

    in_process: ClassVar[bool] = False
    """True for executors that run nodes in the caller's process (threads)."""

    kind: ClassVar[str] = "executor"
    """Short name used in messages (``"threads"``, ``"Ray"``, ``"Dask"``)."""

    max_workers: int | None = None
    """How many tasks of one step may run at once (``None``: as many as the step has,
    bounded by the run's ``max_concurrency``)."""

    @abstractmethod
    def submit(
        self, payload: TaskPayload, emit: Emit | None = None
    ) -> concurrent.futures.Future[TaskResult]:
        """Start one attempt of a task; ``emit`` receives its ``custom`` chunks."""

    def cancel(self, future: concurrent.futures.Future[TaskResult]) -> None:
        """Stop a running attempt if the engine can (a timed-out node). Best effort."""
        future.cancel()

    def gather(
        self, futures: Sequence[concurrent.futures.Future[TaskResult]], timeout: float | None = None
    ) -> list[TaskResult]:
        """Wait for ``futures`` and return their results in order.

        Raises ``TimeoutError`` when they have not all finished within ``timeout``.
        """
        _done, pending = concurrent.futures.wait(futures, timeout=timeout)
        if pending:
            raise TimeoutError(f"{len(pending)} of {len(futures)} tasks did not finish in time.")
        return [f.result() for f in futures]

    async def asubmit(
        self, payload: TaskPayload, emit: Emit | None = None
    ) -> asyncio.Future[TaskResult]:
        """Async twin of :meth:`submit`: an asyncio future of the attempt's result."""
        return asyncio.wrap_future(self.submit(payload, emit))

    async def agather(
        self, futures: Sequence[asyncio.Future[TaskResult]], timeout: float | None = None
    ) -> list[TaskResult]:
        """Async twin of :meth:`gather`."""
        return list(await asyncio.wait_for(asyncio.gather(*futures), timeout))

    def close(self) -> None:  # noqa: B027 (an executor may hold nothing)
        """Release what the executor holds (pools, stream channels, a cluster it started)."""

    def __enter__(self) -> TaskExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def check_executor(value: Any, setting: str) -> TaskExecutor | None:
    """Return ``value`` if it is an executor (or ``None``); raise naming ``setting`` if not."""
    if value is None or isinstance(value, TaskExecutor):
        return value
    raise TypeError(
        f"{setting} must be a TaskExecutor (stategraph.executors.ThreadExecutor, "
        "stategraph.executors.ray.RayExecutor or stategraph.executors.dask.DaskExecutor), "
        f"got {value!r}. Leave it out to run tasks on the caller's threads."
    )
