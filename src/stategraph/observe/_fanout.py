"""Observations: the one record of what happens in a run, fanned out to every consumer.

The loop decides and yields effects; the shells perform them and, while doing so,
report what happened as *observations*: the run starting, resuming, finishing,
pausing on an interrupt or failing; each super-step starting and finishing; each
attempt of each task starting, finishing or failing; each checkpoint handed to the
saver. Code running inside a node reports what it does through the same channel
(custom events, tool calls, routing functions, chat-model calls).

Every consumer is a :class:`RunObserver`: the LangChain-style callback handlers of
``config["callbacks"]``, the graph lifecycle callbacks, ``astream_events``, the
OpenTelemetry instrumentation, ``debug`` logging. None of them reaches into the loop.

A run with no consumer has ``run.observers is None`` and the shells skip every report
with one attribute test, so observing costs nothing when nobody listens.

Observer methods run on the thread (or coroutine) where the event happens: task
reports run inside the task's own context (so an observer may make something, such
as a tracing span, current for the node's code), and reports of tasks that run in
parallel may arrive from several threads at once. A method may return an awaitable;
the asynchronous shell awaits it, the synchronous one runs it to completion.

An observer that raises is logged once (per observer) and otherwise ignored, so a
broken handler or exporter never fails a run, unless it sets ``raise_error = True``:
then its error propagates into the run.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any

from stategraph._failures import report_failure
from stategraph._sync_await import aresolve, resolve
from stategraph.observe._protocol import RunAndTask, RunObserver

__all__ = [
    "Observers",
    "ModelCallObserving",
    "resolve",
    "aresolve",
    "current_run_and_task",
    "chain_reports",
]


_METHODS = tuple(
    name
    for name, value in vars(RunObserver).items()
    if callable(value) and not name.startswith("_")
)


def _overrides(observer: RunObserver, name: str) -> bool:
    method = getattr(type(observer), name, None)
    return method is not None and method is not getattr(RunObserver, name)


class Observers(RunObserver):
    """The observers of one run (and of the runs nested in it): the fan-out.

    It has every :class:`RunObserver` method, made from that class's list of them (see
    :func:`_fan_out`). Each report goes only to the observers that override the method,
    in order. A report returns ``None``, or an awaitable when some observer returned one
    (see :func:`resolve` / :func:`aresolve`).
    """

    __slots__ = ("_by_method", "items")

    def __init__(self, items: Iterable[RunObserver]) -> None:
        self.items: tuple[RunObserver, ...] = tuple(items)
        self._by_method: dict[str, tuple[RunObserver, ...]] = {
            name: tuple(o for o in self.items if _overrides(o, name)) for name in _METHODS
        }

    def __bool__(self) -> bool:
        return bool(self.items)

    def __repr__(self) -> str:
        return f"Observers({list(self.items)!r})"

    def wants(self, name: str) -> bool:
        """Whether some observer handles reports of ``name`` (e.g. ``"custom_event"``)."""
        return bool(self._by_method.get(name))

    def with_extra(self, extra: Sequence[RunObserver]) -> Observers:
        """These observers plus ``extra`` (for a nested run with handlers of its own)."""
        return Observers((*self.items, *extra))

    def _report(self, name: str, args: tuple[Any, ...]) -> Any:
        pending: list[Awaitable[Any]] | None = None
        for observer in self._by_method[name]:
            try:
                result = getattr(observer, name)(*args)
            except Exception as exc:
                if observer.raise_error:
                    raise
                report_failure(observer, exc, name)
                continue
            if result is not None and inspect.isawaitable(result):
                if pending is None:
                    pending = []
                pending.append(_guarded(observer, name, result))
        if pending is None:
            return None
        return _gather(pending)


def _fan_out(name: str) -> Callable[..., Any]:
    """The :class:`Observers` method of the report ``name``: it hands the report's
    arguments to every observer that overrides the method."""

    def report(self: Observers, *args: Any) -> Any:
        return self._report(name, args)

    report.__name__ = name
    report.__qualname__ = f"Observers.{name}"
    report.__doc__ = f"Report :meth:`RunObserver.{name}` to the observers that override it."
    return report


for _name in _METHODS:
    setattr(Observers, _name, _fan_out(_name))


class ModelCallObserving:
    """The model-call hook's handler that reports chat-model calls as observations
    (added to a run's ``model_handlers`` when an observer wants them)."""

    streams = False

    def __init__(self, observers: Observers) -> None:
        self.observers = observers
        self.streams = observers.wants("model_chunk")
        self._where: dict[int, RunAndTask] = {}

    def on_model_start(self, call: Any) -> bool:
        current = current_run_and_task()
        if current is None:
            return False
        self._where[id(call)] = current
        resolve(self.observers.model_started(current.run, current.task, call))
        return True

    def on_model_chunk(self, call: Any, chunk: Any) -> None:
        where = self._where.get(id(call))
        if where is not None:
            resolve(self.observers.model_chunk(where.run, where.task, call, chunk))

    def on_model_end(self, call: Any, message: Any) -> None:
        where = self._where.pop(id(call), None)
        if where is not None:
            resolve(self.observers.model_finished(where.run, where.task, call, message))

    def on_model_error(self, call: Any, error: BaseException) -> None:
        where = self._where.pop(id(call), None)
        if where is not None:
            resolve(self.observers.model_failed(where.run, where.task, call, error))


def chain_reports(first: Any, second: Any) -> Any:
    """One report of two: ``None``, one of them, or an awaitable running both in order."""
    if first is None:
        return second
    if second is None:
        return first
    return _gather([first, second])


async def _guarded(observer: RunObserver, name: str, awaitable: Awaitable[Any]) -> None:
    try:
        await awaitable
    except Exception as exc:
        if observer.raise_error:
            raise
        report_failure(observer, exc, name)


async def _gather(pending: list[Awaitable[Any]]) -> None:
    # one after the other, in observer order, like the synchronous reports
    for item in pending:
        await item


def current_run_and_task() -> RunAndTask | None:
    """The run and task of the node code calling this, or ``None`` outside a run.

    (A running task's context holds them as a plain pair, the cheapest thing to make
    for every task; this names them for the observer asking.)
    """
    from stategraph._context import CURRENT_TASK

    ctx = CURRENT_TASK.get()
    if ctx is None or not isinstance(ctx.run, tuple):
        return None
    run, task = ctx.run
    return RunAndTask(run, task)
