"""One attempt of one task: context setup, the node call, its writers, the outcome.

The shells differ only in *how* they call the node (directly, in a thread, awaited);
everything before and after the call is here, once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from stategraph._context import CURRENT_TASK, TaskContext
from stategraph._notes import add_note
from stategraph.constants import CONF, TASK_BOOKKEEPING
from stategraph.errors import GraphBubbleUp, GraphInterrupt, ParentCommand
from stategraph.observe._run_metadata import task_run_metadata
from stategraph.pregel._retry import retry_delay
from stategraph.runtime import ExecutionInfo
from stategraph.types import Command

if TYPE_CHECKING:
    from stategraph.pregel._run import RunContext
    from stategraph.pregel._task import Task

__all__ = [
    "make_context",
    "run_writers",
    "record_failure",
    "after_failure",
    "reset_for_retry",
    "handle_parent_command",
]


def make_context(
    task: Task,
    run: RunContext,
    step: int,
    heartbeat: Callable[[], None] | None = None,
    auto_refresh: bool = False,
) -> TaskContext:
    """Build the context ``get_config()``/``interrupt()``/``get_runtime()`` see in the task.

    ``heartbeat`` (for nodes with an idle timeout) becomes ``runtime.heartbeat``; with
    ``auto_refresh`` the node's stream writes and state writes also count as progress.
    """
    runtime = run.runtime
    writer: Callable[[Any], None] = runtime.stream_writer
    send: Callable[[list[tuple[str, Any]]], None] = task.send
    if "custom" in run.modes and run.sink is not None:
        writer = _custom_writer(run.sink, run.stream_ns)
        runtime = runtime.override(stream_writer=writer)
    if heartbeat is not None:
        if auto_refresh:
            writer, send = _beating(heartbeat, writer), _beating(heartbeat, send)
        runtime = runtime.override(heartbeat=heartbeat, stream_writer=writer)
    loop = run.loop
    parts = _TaskParts(run, task, step, runtime, loop.checkpoint_id if loop is not None else "")
    # by position: a keyword call of a class builds a dict per call (once per task)
    ctx = TaskContext(
        parts.config,
        None,
        None,
        send,
        task.ns,
        task.name,
        task.id,
        writer,
        (run, task),
        None,
        parts.runtime,
        time.time(),
        task,
    )
    if run.model_handlers and run.messages is not None and "messages" in run.modes:
        run.messages.task_started(task)
    scopes = run.scopes  # computed once per run (the first task asks for them)
    ctx.scopes = scopes if scopes is not None else run.task_scopes()
    return ctx


class _TaskParts:
    """What a task's config and runtime are built from when the node first asks for
    them (one object per task, whose methods the context calls, instead of closures)."""

    __slots__ = ("base_runtime", "checkpoint_id", "run", "step", "task")

    def __init__(
        self, run: RunContext, task: Task, step: int, base_runtime: Any, checkpoint_id: str
    ) -> None:
        self.run = run
        self.task = task
        self.step = step
        self.base_runtime = base_runtime
        self.checkpoint_id = checkpoint_id

    def config(self) -> dict[str, Any]:
        """The config the node sees (``get_config()``, a ``config`` parameter)."""
        run = self.run
        task = self.task
        conf = {
            **run.configurable,
            "thread_id": run.thread_id,
            "checkpoint_ns": task.ns,
            "__pregel_task_id": task.id,
            # the run's durability, where LangGraph's nodes find it
            "__pregel_durability": run.durability,
        }
        metadata = task_run_metadata(run, task, self.step)
        return {
            **run.config,
            CONF: conf,
            "metadata": metadata,
            "tags": list(run.tags) + list(task.node.tags),
            "recursion_limit": run.recursion_limit,
        }

    def runtime(self, ctx: TaskContext) -> Any:
        """The ``Runtime`` the node sees, with this attempt's execution info."""
        run = self.run
        task = self.task
        info = ExecutionInfo(
            checkpoint_id=self.checkpoint_id,
            checkpoint_ns=task.ns,
            task_id=task.id,
            thread_id=run.thread_id,
            run_id=run.run_id,
            node_attempt=ctx.attempt,
            node_first_attempt_time=ctx.first_attempt_time,
        )
        return self.base_runtime.override(
            execution_info=info, control=run.control, server_info=run.server_info
        )


def _custom_writer(sink: Callable[..., Any], ns: Any) -> Callable[[Any], None]:
    """The stream writer of a run streaming ``custom`` chunks."""

    def custom_writer(chunk: Any) -> None:
        sink(ns, "custom", chunk)

    return custom_writer


def _beating(beat: Callable[[], None], call: Callable[[Any], None]) -> Callable[[Any], None]:
    """``call`` that first counts as progress (``beat``) for an idle timeout."""

    def beating(arg: Any) -> None:
        beat()
        call(arg)

    return beating


def run_writers(task: Task, output: Any) -> None:
    """Turn the node's output into writes (writers may raise for invalid returns)."""
    for writer in task.node.writers:
        result = writer(task, output)
        if result is not None and hasattr(result, "__await__"):
            result.close()
            raise TypeError(
                f"Node '{task.name}' has an async routing function; run the graph with "
                "ainvoke()/astream() (or make the routing function synchronous)."
            )


async def arun_writers(task: Task, output: Any) -> None:
    """Async twin of :func:`run_writers`: awaits async routing functions."""
    for writer in task.node.writers:
        result = writer(task, output)
        if result is not None and hasattr(result, "__await__"):
            await result


class _ScopedToken:
    """What :func:`enter` returns when model-library scopes were entered too."""

    __slots__ = ("token", "undo")

    def __init__(self, token: Any, undo: list[Callable[[], None]]) -> None:
        self.token = token
        self.undo = undo


def settle_calls(ctx: TaskContext) -> None:
    """Wait for the ``@task`` calls the task started and did not wait for itself.

    Called when a task's attempt returns or is interrupted, before its writes are
    collected: a call still running when its caller reached ``interrupt()`` (or
    returned) finishes and its result is saved, so resuming does not run it again.
    A failed attempt does not wait (as LangGraph, which abandons the step then).
    """
    pad = ctx.built_scratchpad
    if pad is None or not pad.inflight:
        return
    from concurrent.futures import Future, wait

    while pad.inflight:
        batch = [f for f in pad.inflight if isinstance(f, Future)]
        # calls started while waiting join the list; waiting again picks them up
        pad.inflight.clear()
        if batch:
            wait(batch)


async def asettle_calls(ctx: TaskContext) -> None:
    """Async twin of :func:`settle_calls` (awaits asyncio calls and thread calls alike)."""
    pad = ctx.built_scratchpad
    if pad is None or not pad.inflight:
        return
    import asyncio
    from concurrent.futures import Future

    while pad.inflight:
        batch = [asyncio.wrap_future(f) if isinstance(f, Future) else f for f in pad.inflight]
        pad.inflight.clear()
        if batch:
            await asyncio.wait(batch)


def enter(ctx: TaskContext) -> Any:
    """Make ``ctx`` the current task context; returns the token for :func:`leave`.

    Also enters the task's model-library scopes (only when the run has model-call
    handlers and such a library is in use). Called once per attempt, so the numbering
    of the graphs the node runs restarts.
    """
    ctx.subgraph_calls = 0
    token = CURRENT_TASK.set(ctx)
    if not ctx.scopes:
        return token
    undo = [u for u in (scope(ctx) for scope in ctx.scopes) if u is not None]
    return _ScopedToken(token, undo)


def leave(token: Any) -> None:
    """Leave the scopes :func:`enter` entered and restore the previous task context."""
    if type(token) is _ScopedToken:
        for undo in reversed(token.undo):
            _reset_quietly(undo)
        token = token.token
    try:
        CURRENT_TASK.reset(token)
    except ValueError:  # in another context: see _reset_quietly
        pass


def _reset_quietly(reset: Any, *args: Any) -> None:
    """Undo one context change, unless this code runs in another context.

    A suspended run (a generator dropped mid-stream) can be finalized by the garbage
    collector on any thread, in a context where the variables were never set: resetting
    there raises ``ValueError`` ("created in a different Context") and nothing needs
    undoing, since the context that held the values is gone with the run.
    """
    try:
        reset(*args)
    except ValueError:
        pass


def handle_parent_command(task: Task, exc: ParentCommand) -> bool:
    """Handle a ``Command(graph=PARENT)`` that bubbled out of a subgraph in this task.

    Returns True when the command targets this task's graph (it is then applied as
    the task's output); False when it must keep bubbling up.
    """
    hops = getattr(exc, "_sg_hops", 0)
    if hops == 0:
        exc._sg_hops = 1  # type: ignore[attr-defined]
        return False
    cmd = exc.args[0]
    own = Command(update=cmd.update, goto=cmd.goto, resume=cmd.resume)
    task.writes = [w for w in task.writes if w[0] in TASK_BOOKKEEPING]
    run_writers(task, own)
    return True


def record_failure(task: Task, exc: BaseException) -> None:
    """Store a task's final failure: interrupts apart, others with the node named."""
    if isinstance(exc, GraphInterrupt):
        task.interrupts = exc.interrupts
        task.interrupted = True
        return
    if not isinstance(exc, (GraphInterrupt, ParentCommand)):
        note = f"During task with name '{task.name}' and id '{task.id}'"
        add_note(exc, note)
    task.error = exc


def after_failure(task: Task, exc: Exception, failures: int) -> float | None:
    """Decide what follows a failed attempt; both shells call this.

    Returns the seconds to wait before retrying, or ``None`` when the task is over:
    a ``Command(graph=PARENT)`` from a subgraph was applied, or the failure (an
    interrupt, another control-flow exception, or an error no retry policy accepts)
    was recorded on the task.
    """
    if isinstance(exc, ParentCommand):
        try:
            if handle_parent_command(task, exc):
                return None
        except Exception as inner:
            record_failure(task, inner)
            return None
        record_failure(task, exc)
        return None
    if isinstance(exc, GraphBubbleUp):
        record_failure(task, exc)
        return None
    delay = retry_delay(task.retry_policy, exc, failures, task.name)
    if delay is None:
        record_failure(task, exc)
        return None
    reset_for_retry(task)
    return delay


def reset_for_retry(task: Task) -> None:
    """Discard the writes of a failed attempt (resume bookkeeping is kept)."""
    task.writes = [w for w in task.writes if w[0] in TASK_BOOKKEEPING]
