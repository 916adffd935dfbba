"""One attempt of one task: context setup, the node call, its writers, the outcome.

The shells differ only in *how* they call the node (directly, in a thread, awaited);
everything before and after the call is here, once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from stategraph._context import CURRENT_TASK, TaskContext
from stategraph._notes import add_note
from stategraph.constants import CONF, TASK_BOOKKEEPING
from stategraph.errors import GraphBubbleUp, GraphInterrupt, ParentCommand
from stategraph.pregel.retry import retry_delay
from stategraph.types import Command

if TYPE_CHECKING:
    from stategraph.pregel.run import RunContext
    from stategraph.pregel.task import Task

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
    send = task.send
    if "custom" in run.modes and run.sink is not None:
        sink = run.sink
        ns = run.stream_ns

        def custom_writer(chunk: Any) -> None:
            sink(ns, "custom", chunk)

        writer = custom_writer
        runtime = runtime.override(stream_writer=writer)
    if heartbeat is not None:
        beat = heartbeat
        if auto_refresh:
            plain_writer, plain_send = writer, send

            def writer(chunk: Any) -> None:
                beat()
                plain_writer(chunk)

            def send(writes: list[tuple[str, Any]]) -> None:
                beat()
                plain_send(writes)

        runtime = runtime.override(heartbeat=beat, stream_writer=writer)

    def make_config() -> dict[str, Any]:
        conf = {
            **run.configurable,
            "thread_id": run.thread_id,
            "checkpoint_ns": task.ns,
            "__pregel_task_id": task.id,
        }
        node_meta = {k: v for k, v in task.node.metadata.items() if not k.startswith("__")}
        metadata = {
            **run.metadata,
            **node_meta,
            "thread_id": run.thread_id,
            "langgraph_step": step,
            "langgraph_node": task.name,
            "langgraph_triggers": tuple(task.triggers),
            "langgraph_path": task.path,
            "langgraph_checkpoint_ns": task.ns,
        }
        cfg = {
            **run.config,
            CONF: conf,
            "metadata": metadata,
            "tags": list(run.tags) + list(task.node.tags),
            "recursion_limit": run.recursion_limit,
        }
        return cfg

    return TaskContext(
        make_config=make_config,
        runtime=runtime,
        scratchpad=task.scratchpad,
        send=send,
        checkpoint_ns=task.ns,
        task_name=task.name,
        task_id=task.id,
        stream_writer=writer,
        run=(run, task),
    )


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


def enter(ctx: TaskContext) -> Any:
    """Make ``ctx`` the current task context; returns the token for :func:`leave`."""
    return CURRENT_TASK.set(ctx)


def leave(token: Any) -> None:
    """Restore the previous task context."""
    CURRENT_TASK.reset(token)


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
