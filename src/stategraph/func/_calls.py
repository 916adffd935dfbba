"""How a ``@task`` call is seen: its context, config, reports to observers and events.

Private to :mod:`stategraph.func`: a call runs in a context of its own (its interrupt
scope and checkpoint namespace), with a config attributed to the call as LangGraph
gives it, and each attempt is reported to the run's observers as a run of its own.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from stategraph._context import TaskContext
from stategraph._sync_await import resolve as resolve_report
from stategraph.constants import CALL_RESUME, CONF, NS_END, NS_SEP, RESUME, RESUME_ASKED
from stategraph.observe import call_namespace, call_run_metadata

__all__ = ["_CallReport", "_call_context", "_emit_call_event"]


class _CallReport:
    """Reports the attempts of one ``@task`` call to the run's observers (each attempt
    a run of its own) and gives a model library the call's config while it runs."""

    __slots__ = ("call_ctx", "call_id", "observed", "started_args")

    def __init__(
        self,
        ctx: TaskContext,
        call_ctx: TaskContext,
        call_id: str,
        name: str,
        func: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> None:
        self.call_ctx = call_ctx
        self.call_id = call_id
        self.observed = _observed(ctx)
        self.started_args = (
            None
            if self.observed is None
            else (*self.observed, call_id, name, _call_input(func, args, kwargs))
        )

    def started(self) -> Any:
        """Report an attempt's start (a report to resolve, or ``None``)."""
        if self.started_args is None:
            return None
        return self.started_args[0].observers.call_started(*self.started_args)

    def enter(self) -> Any:
        """Enter the call's scope for a model library; returns the undo or ``None``."""
        return _enter_call_scope(self.call_ctx, self.call_id)

    def begin(self) -> Any:
        """Sync: report the start of an attempt and enter its scope."""
        resolve_report(self.started())
        return self.enter()

    def failed(self, exc: BaseException) -> Any:
        """Report that an attempt failed with ``exc``."""
        if self.observed is None:
            return None
        return self.observed[0].observers.call_failed(*self.observed, self.call_id, exc)

    def finished(self, value: Any) -> Any:
        """Report that the call returned ``value``."""
        if self.observed is None:
            return None
        return self.observed[0].observers.call_finished(*self.observed, self.call_id, value)


def _enter_call_scope(ctx: TaskContext, call_id: str) -> Any:
    """Let a model library's runs inside the call carry the call's config and nest
    under the call's own run when it is observed (only when the library is in use);
    returns the undo, or ``None``."""
    from stategraph._bridges import langchain_bridge

    bridge = langchain_bridge()
    return bridge.enter_call(ctx, call_id) if bridge is not None else None


def _observed(ctx: Any) -> tuple[Any, Any] | None:
    """``(run, task)`` of the calling task when the run has observers of calls."""
    pair = ctx.run
    if not isinstance(pair, tuple):
        return None
    run_ctx = pair[0]
    observers = getattr(run_ctx, "observers", None)
    if observers is None or not observers.wants("call_started"):
        return None
    return run_ctx, pair[1]


def _call_input(func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """A call's arguments by parameter name (what traces show as its input)."""
    try:
        bound = inspect.signature(func).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return {"args": args, "kwargs": kwargs}
    return dict(bound.arguments)


def _emit_call_event(run_ctx: Any, call_id: str, kind: str, fields: dict[str, Any]) -> None:
    """A ``tasks``/``debug`` event for a ``@task`` call (a pushed task, as in LangGraph)."""
    from stategraph.observe._debug import debug_event
    from stategraph.pregel._algo import make_task_id

    payload = {"id": make_task_id(call_id), **fields}
    run_ctx.emit("tasks", payload)
    step = run_ctx.loop.step if run_ctx.loop is not None else 0
    run_ctx.emit("debug", debug_event(kind, step, payload))


def _call_context(ctx: TaskContext, call_id: str, name: str) -> TaskContext:
    """The context a ``@task`` call runs in: the caller's, with its own interrupt scope.

    ``interrupt()`` inside the call gets ids of its own (from the call's namespace) and
    its answers are saved per call (``CALL_RESUME``), so parallel calls that each ask a
    question are resumed independently. Results of nested calls share the caller's
    record, so nothing that finished runs again.
    """
    assert ctx.scratchpad is not None
    pad = ctx.scratchpad
    call_pad = pad.for_call(call_id, name)
    parent_send = ctx.send

    def send(writes: list[tuple[str, Any]]) -> None:
        out: list[tuple[str, Any]] = []
        for chan, value in writes:
            if chan == RESUME:
                pad.call_resume[call_id] = list(value)
                out.append((CALL_RESUME, {k: list(v) for k, v in pad.call_resume.items()}))
            elif chan != RESUME_ASKED:
                out.append((chan, value))
        if out:
            parent_send(out)

    return TaskContext(
        make_config=_call_config(ctx, call_id, name),
        runtime=ctx.runtime,
        scratchpad=call_pad,
        send=send,
        checkpoint_ns=f"{ctx.checkpoint_ns}{NS_SEP}{name}{NS_END}{call_id}",
        task_name=name,
        task_id=call_id,
        stream_writer=ctx.stream_writer,
        run=ctx.run,
    )


def _call_config(ctx: TaskContext, call_id: str, name: str) -> Callable[[], dict[str, Any]]:
    """Builds the run config of a ``@task`` call: its caller's, attributed to the call
    (``langgraph_node`` the task, its path and checkpoint namespace), as LangGraph gives
    it, so models and tools called inside are reported as the task's."""
    task = ctx.run[1] if isinstance(ctx.run, tuple) else None
    if task is None:
        return ctx.make_config

    def make_config() -> dict[str, Any]:
        base = ctx.config
        conf = dict(base.get(CONF) or {})
        conf["checkpoint_ns"] = call_namespace(task.ns, call_id, name)
        metadata = call_run_metadata(base.get("metadata") or {}, task, call_id, name)
        return {**base, CONF: conf, "metadata": metadata}

    return make_config
