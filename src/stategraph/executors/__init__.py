"""Task executors: where the node calls of a graph's tasks run.

The loop of a run always stays in the process that started it; an executor runs the
node calls of its tasks. :class:`ThreadExecutor` (the default) uses the caller's
threads; :mod:`stategraph.executors.ray` and :mod:`stategraph.executors.dask` send the
calls to a Ray or Dask cluster (optional extras ``ray`` and ``dask``, imported only
when used). Choose one per graph with ``compile(executor=...)`` or per run with
``config={"executor": ...}``.
"""

from stategraph.executors.base import (
    Emit,
    Heartbeat,
    TaskExecutor,
    TaskPayload,
    TaskResult,
    WorkerLostError,
    check_executor,
)
from stategraph.executors.stores import StoreUnreachableError
from stategraph.executors.threads import ThreadExecutor
from stategraph.executors.worker import RemoteTaskError, run_payload

__all__ = [
    "Emit",
    "Heartbeat",
    "RemoteTaskError",
    "StoreUnreachableError",
    "TaskExecutor",
    "TaskPayload",
    "TaskResult",
    "ThreadExecutor",
    "WorkerLostError",
    "check_executor",
    "run_payload",
]
