"""Run a graph's tasks on a Dask cluster (optional extra: ``pip install stategraph[dask]``).

Example::

    from distributed import Client
    from stategraph.executors.dask import DaskExecutor

    executor = DaskExecutor(Client("tcp://scheduler:8786"))
    graph = builder.compile(executor=executor)

Each attempt of a task is one Dask task (never retried by Dask: the node's
``RetryPolicy`` decides). ``custom`` stream chunks travel through a
``distributed.Queue`` per executor. For a worker that dies mid-task to surface at once
as :class:`~stategraph.executors.WorkerLostError` (and be retried per the node's
policy), run the scheduler with ``distributed.scheduler.allowed-failures: 0``;
otherwise Dask first re-runs the task on other workers by itself.
"""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any

import distributed
from distributed import Client, Queue

from stategraph.executors.base import TaskPayload, TaskResult
from stategraph.executors.remote import Done, RemoteExecutor, numbered
from stategraph.executors.worker import run_payload

__all__ = ["DaskExecutor"]

_POLL = 0.004
"""Seconds between two reads of the chunk queue while a streaming task runs."""
_NAP = threading.Event()  # never set: waiting on it is a sleep nobody can patch away


def _run(payload: TaskPayload | None, queue_name: str | None, key: str | None) -> TaskResult:
    """The Dask task: run the payload; chunks go to the named queue, tagged with ``key``.

    Without a payload it only reports the worker (see :meth:`DaskExecutor.ready`).
    """
    worker = distributed.get_worker()
    if payload is None:
        return TaskResult(worker=f"Dask worker {worker.address}")
    emit = None
    if queue_name is not None and key is not None:
        queue = Queue(queue_name, client=distributed.get_client())
        emit = numbered(queue.put, key)
    return run_payload(payload, emit, f"Dask worker {worker.address}")


def _killed_worker(last: Any) -> str:
    """Names the worker a ``KilledWorker`` error blames: address, name, pid, host."""
    address = getattr(last, "address", None) or (str(last) if last is not None else "")
    if not address:
        return "a Dask worker (the scheduler did not say which)"
    details = []
    name = getattr(last, "name", None)
    if name is not None and str(name) != address:
        details.append(f"name {name}")
    pid = getattr(last, "pid", None)
    if pid:
        details.append(f"pid {pid}")
    host = getattr(last, "host", None)
    if host:
        details.append(f"host {host}")
    return f"Dask worker {address}" + (f" ({', '.join(details)})" if details else "")


class DaskExecutor(RemoteExecutor):
    """Runs the node calls of a graph's tasks as Dask tasks; the loop stays local.

    Args:
        client: a connected ``distributed.Client`` (not closed by :meth:`close`).
        address: the scheduler to connect to when no client is given (the client this
            executor opens is closed by :meth:`close`).
        submit_kwargs: more ``Client.submit`` arguments for every task (``resources``,
            ``workers``...).

    With neither ``client`` nor ``address``, the current default client is used
    (``distributed.get_client()``), or, when there is none, a local cluster is started
    (``distributed.Client()``: one worker process per core) and closed by :meth:`close`,
    as ``RayExecutor()`` starts a local Ray.
    """

    kind = "Dask"

    def __init__(
        self,
        client: Client | None = None,
        *,
        address: str | None = None,
        submit_kwargs: dict[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self._owns = False
        if client is None:
            if address is not None:
                client = Client(address)
                self._owns = True
            else:
                try:
                    client = distributed.get_client()
                except ValueError:  # no client yet: start a local cluster, as RayExecutor does
                    client = Client()
                    self._owns = True
        self.client = client
        self._submit_kwargs = dict(submit_kwargs or {})
        self._queue: Queue | None = None
        self._queue_lock = threading.Lock()

    def ready(self, timeout: float | None = 60.0) -> None:
        """Block until the cluster runs tasks and the stream channel is up."""
        self._channel()
        self.client.submit(_run, None, None, None, pure=False).result(timeout)

    def _channel(self) -> Queue:
        with self._queue_lock:
            if self._queue is None:
                self._queue = Queue(f"stategraph-chunks-{uuid.uuid4().hex}", client=self.client)
            return self._queue

    def _start(self, payload: TaskPayload, key: str | None) -> Any:
        queue_name = self._channel().name if key is not None else None
        return self.client.submit(
            _run,
            payload,
            queue_name,
            key,
            pure=False,
            retries=0,
            key=f"stategraph-{payload.node}-{uuid.uuid4().hex}",
            **self._submit_kwargs,
        )

    def _watch(self, handle: Any, done: Done) -> None:
        def finished(fut: Any) -> None:
            try:
                result = fut.result()
            except BaseException as exc:
                done(None, exc)
            else:
                done(result, None)

        handle.add_done_callback(finished)

    def _cancel(self, handle: Any) -> None:
        try:
            handle.cancel()
        except Exception:
            pass

    def _receive(self, timeout: float) -> list[tuple[str, int, Any]]:
        # polls (a blocking get that times out makes the scheduler log an error)
        queue = self._channel()
        deadline = time.monotonic() + timeout
        while True:
            items: list[tuple[str, int, Any]] = queue.get(batch=True)
            if items or time.monotonic() >= deadline:
                return items
            _NAP.wait(_POLL)

    def _lost_worker(self, error: BaseException) -> str | None:
        if isinstance(error, distributed.KilledWorker):
            return _killed_worker(getattr(error, "last_worker", None))
        return None

    def close(self) -> None:
        """Stop the stream pump; close the client if this executor opened it."""
        super().close()
        if self._owns:
            self.client.close()
            self._owns = False

    def __repr__(self) -> str:
        return f"DaskExecutor({self.client!r})"
