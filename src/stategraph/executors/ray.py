"""Run a graph's tasks on a Ray cluster (optional extra: ``pip install stategraph[ray]``).

Example::

    from stategraph.executors.ray import RayExecutor

    executor = RayExecutor()                  # a local Ray, or the one already initialized
    executor = RayExecutor(address="auto")    # the running cluster of this machine
    graph = builder.compile(executor=executor)

Each attempt of a task is one Ray task (``max_retries=0``: the node's ``RetryPolicy``
decides about retries, a worker that died surfaces as
:class:`~stategraph.executors.WorkerLostError`). ``custom`` stream chunks travel through
one small async actor per executor (no CPU reserved), started with the executor.
"""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import uuid
from collections import OrderedDict
from typing import Any

import ray
import ray.exceptions

from stategraph.executors.base import TaskPayload, TaskResult
from stategraph.executors.remote import Done, RemoteExecutor, numbered
from stategraph.executors.worker import run_payload

__all__ = ["RayExecutor"]

_ASK_TIMEOUT = 10.0
"""Seconds to wait for the hub's answer when naming a lost worker."""

_LOST = (
    ray.exceptions.WorkerCrashedError,
    ray.exceptions.NodeDiedError,
    ray.exceptions.LocalRayletDiedError,
    ray.exceptions.TaskUnschedulableError,
)


_WHO: list[str] = []
"""This worker process's description (computed once per process)."""

_REMEMBERED = 4096
"""How many task starts the hub remembers (for naming the worker of a lost task)."""


def _worker() -> str:
    if not _WHO:
        ctx = ray.get_runtime_context()
        _WHO.append(
            f"Ray worker {ctx.get_worker_id()[:12]} (pid {os.getpid()}) on node "
            f"{ctx.get_node_id()[:12]} ({socket.gethostname()}, "
            f"{ray.util.get_node_ip_address()})"
        )
    return _WHO[0]


_HUBS: dict[str, Any] = {}
"""The hub actors this worker process looked up, by name."""


def _hub_named(name: str) -> Any:
    """The hub actor called ``name`` (looked up once per worker process: passing the
    handle with every task would cost Ray's handle bookkeeping each time)."""
    hub = _HUBS.get(name)
    if hub is None:
        hub = _HUBS[name] = ray.get_actor(name)
    return hub


def _run(
    payload: TaskPayload | None, hub_name: str | None, key: str | None, tag: str | None = None
) -> TaskResult:
    """The Ray task: run the payload; chunks go to the hub actor, tagged with ``key``.

    First it tells the hub which worker runs attempt ``tag`` (fire and forget), so
    that a worker killed mid-task can be named (Ray's ``WorkerCrashedError`` does
    not say which). Without a payload it only reports the worker (see
    :meth:`RayExecutor.ready`).
    """
    if payload is None:
        return TaskResult(worker=_worker())
    hub = _hub_named(hub_name) if hub_name is not None else None
    if hub is not None and tag is not None:
        hub.started.remote(tag, _worker())
    emit = None
    if hub is not None and key is not None:
        emit = numbered(lambda item: hub.put.remote(item), key)
    return run_payload(payload, emit, _worker())


class _Hub:
    """An async actor holding stream chunks until the caller's pump takes them."""

    def __init__(self) -> None:
        self.items: list[tuple[str, int, Any]] = []
        self.ready = asyncio.Event()
        self.workers: OrderedDict[str, str] = OrderedDict()

    async def started(self, tag: str, worker: str) -> None:
        self.workers[tag] = worker
        while len(self.workers) > _REMEMBERED:
            self.workers.popitem(last=False)

    async def worker_of(self, tag: str) -> str | None:
        return self.workers.get(tag)

    async def put(self, item: tuple[str, int, Any]) -> None:
        self.items.append(item)
        self.ready.set()

    async def take(self, timeout: float) -> list[tuple[str, int, Any]]:
        if not self.items:
            try:
                await asyncio.wait_for(self.ready.wait(), timeout)
            except asyncio.TimeoutError:
                pass
        items, self.items = self.items, []
        self.ready.clear()
        return items


class RayExecutor(RemoteExecutor):
    """Runs the node calls of a graph's tasks as Ray tasks; the loop stays local.

    Args:
        address: the cluster to connect to (``"auto"``, ``"ray://host:10001"``...).
            Without it, an already initialized Ray is used, else a local one starts
            (and is shut down by :meth:`close`).
        num_cpus: CPUs of the local Ray this executor starts (ignored when connecting).
        init_kwargs: more ``ray.init`` arguments (e.g. ``runtime_env``).
        task_options: Ray task options (``num_cpus``, ``resources``, ``runtime_env``...)
            for every task; ``max_retries`` defaults to 0 so retries follow the node's
            ``RetryPolicy``.
    """

    kind = "Ray"

    def __init__(
        self,
        address: str | None = None,
        *,
        num_cpus: int | None = None,
        init_kwargs: dict[str, Any] | None = None,
        task_options: dict[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self._owns = False
        if not ray.is_initialized():
            kwargs = dict(init_kwargs or {})
            if address is not None:
                kwargs["address"] = address
            elif num_cpus is not None:
                kwargs["num_cpus"] = num_cpus
            kwargs.setdefault("log_to_driver", True)
            ray.init(**kwargs)
            self._owns = True
        options: dict[str, Any] = {"max_retries": 0, "retry_exceptions": False}
        options.update(task_options or {})
        self._task: Any = ray.remote(_run).options(**options)
        # the stream hub starts now (an actor takes a moment to start), used when a
        # run first streams custom chunks
        self._hub: Any = None
        self._hub_name = ""
        self._hub_lock = threading.Lock()
        self._new_hub()

    def _new_hub(self) -> Any:
        """Start a hub actor (named, so that tasks find it by name); call with the lock
        held or from ``__init__``."""
        self._hub_name = f"stategraph-hub-{uuid.uuid4().hex}"
        self._hub = ray.remote(_Hub).options(num_cpus=0, name=self._hub_name).remote()
        return self._hub

    def ready(self, timeout: float | None = 60.0) -> None:
        """Block until the cluster runs tasks and the stream channel is up."""
        ray.get([self._task.remote(None, None, None), self._hub.take.remote(0)], timeout=timeout)

    def _start(self, payload: TaskPayload, key: str | None) -> Any:
        with self._hub_lock:
            hub = self._hub if self._hub is not None else self._new_hub()
            name = self._hub_name
        tag = key if key is not None else uuid.uuid4().hex
        return self._task.remote(payload, name, key, tag), hub, tag

    def _watch(self, handle: Any, done: Done) -> None:
        ref, hub, tag = handle
        future = ref.future()

        def finished(fut: Any) -> None:
            try:
                result = fut.result()
            except BaseException as exc:
                if isinstance(exc, _LOST):
                    # ask the hub who ran it, off Ray's callback thread
                    threading.Thread(
                        target=self._name_lost, args=(exc, hub, tag, done), daemon=True
                    ).start()
                    return
                done(None, exc)
            else:
                done(result, None)

        future.add_done_callback(finished)

    @staticmethod
    def _name_lost(error: BaseException, hub: Any, tag: str, done: Done) -> None:
        worker = None
        try:
            worker = ray.get(hub.worker_of.remote(tag), timeout=_ASK_TIMEOUT)
        except Exception:
            pass  # the hub is gone too: report what Ray said
        error._stategraph_worker = worker  # type: ignore[attr-defined]
        done(None, error)

    def _cancel(self, handle: Any) -> None:
        try:
            ray.cancel(handle[0])
        except Exception:
            pass

    def _receive(self, timeout: float) -> list[tuple[str, int, Any]]:
        hub = self._hub
        if hub is None:
            threading.Event().wait(timeout)
            return []
        items: list[tuple[str, int, Any]] = ray.get(hub.take.remote(timeout))
        return items

    def _lost_worker(self, error: BaseException) -> str | None:
        if isinstance(error, _LOST):
            worker = getattr(error, "_stategraph_worker", None)
            if worker:
                return f"{worker}; {type(error).__name__}"
            return (
                f"a Ray worker of this cluster ({type(error).__name__}; it died before "
                "reporting which one it was)"
            )
        return None

    def close(self) -> None:
        """Stop the stream pump and the hub actor; shut Ray down if this executor started it."""
        super().close()
        hub, self._hub = self._hub, None
        if hub is not None and ray.is_initialized():
            try:
                ray.kill(hub)
            except Exception:
                pass
        if self._owns and ray.is_initialized():
            ray.shutdown()
            self._owns = False

    def __repr__(self) -> str:
        return "RayExecutor()"
