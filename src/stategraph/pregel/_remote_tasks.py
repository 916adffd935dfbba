"""The runtime's side of a remote executor: one node call as a payload and back.

Both shells call :meth:`Remote.call` / :meth:`Remote.acall` in place of calling the
node, inside their usual attempt loop: retries, observers, writers, saving and stream
chunks stay with the loop, so a task that ran on a worker is recorded exactly as one
that ran here. What travels: the node function, the task's input, its config (without
process-bound entries), the runtime's plain parts, the store's handle and the
interrupt answers the task has or is offered.

Nodes that need the running loop itself stay local: subgraphs, functional-API
entrypoints (their ``@task`` calls are scheduled by the loop), error handlers (they
receive the failed task) and the ``__start__`` input node.
"""

from __future__ import annotations

import concurrent.futures
import time
from typing import TYPE_CHECKING, Any

from stategraph.constants import CONF, START
from stategraph.errors import NodeTimeoutError
from stategraph.executors.base import Heartbeat, TaskExecutor, TaskPayload, TaskResult
from stategraph.executors.stores import store_handle
from stategraph.pregel._call import NodeCall
from stategraph.pregel._task import _MISSING, ResumeState, Scratchpad, interrupt_id
from stategraph.runtime import DEFAULT_RUNTIME

if TYPE_CHECKING:
    from stategraph._context import TaskContext
    from stategraph.pregel._run import RunContext
    from stategraph.pregel._task import Task

__all__ = ["Remote", "remote_for"]

# configurable entries that describe this process (savers, callbacks), not the task
_LOCAL_KEYS = ("callbacks", "executor")
# the only internal configurable keys a node's config keeps on a worker (plain values)
_SHIPPED_KEYS = frozenset({"__pregel_task_id", "__pregel_durability"})


def remote_for(executor: TaskExecutor | None) -> Remote | None:
    """The runtime's handle on ``executor``; ``None`` when nodes run in this process."""
    if executor is None or executor.in_process:
        return None
    return Remote(executor)


class Remote:
    """Sends the node calls of a run's tasks to a remote :class:`TaskExecutor`."""

    __slots__ = ("executor", "where")

    def __init__(self, executor: TaskExecutor) -> None:
        self.executor = executor
        self.where = f"a {executor.kind} worker"

    def takes(self, task: Task) -> bool:
        """Whether ``task`` runs on the executor (False: it needs the loop, runs here)."""
        node = task.node
        proc = node.proc
        return (
            type(proc) is NodeCall
            and node.name != START
            and not node.subgraphs
            and "error" not in proc.positional
            and "error" not in proc.keywords
        )

    # ------------------------------------------------------------------ payload
    def _payload(self, task: Task, ctx: TaskContext, run: RunContext) -> tuple[TaskPayload, Any]:
        proc = task.node.proc
        config = dict(ctx.config)
        for key in _LOCAL_KEYS:
            config.pop(key, None)
        conf = config.get(CONF)
        if conf:
            config[CONF] = {
                k: v for k, v in conf.items() if not k.startswith("__pregel_") or k in _SHIPPED_KEYS
            }
        runtime = ctx.runtime.override(
            store=None,
            stream_writer=DEFAULT_RUNTIME.stream_writer,
            heartbeat=DEFAULT_RUNTIME.heartbeat,
            control=None,
        )
        scratchpad, offered = _offer(task, run)
        payload = TaskPayload(
            task_id=task.id,
            node=task.name,
            call=proc,
            input=task.input,
            config=config,
            runtime=runtime,
            scratchpad=scratchpad,
            checkpoint_ns=task.ns,
            attempt=ctx.attempt,
            first_attempt_time=ctx.first_attempt_time,
            is_async=bool(proc.is_async),
            streams=("custom" in run.modes and run.sink is not None)
            or (task.timeout is not None and task.timeout.idle_timeout is not None),
            store=store_handle(run.store, self.where),
            idle_timeout=task.timeout.idle_timeout if task.timeout is not None else None,
        )
        return payload, offered

    def _settle(self, task: Task, ctx: TaskContext, result: TaskResult, offered: Any) -> Any:
        _give_back(task, offered, result.scratchpad)
        if result.writes:
            ctx.send(result.writes)
        if result.error is not None:
            raise result.error
        return result.output

    # ------------------------------------------------------------------ calls
    def call(self, task: Task, ctx: TaskContext, run: RunContext) -> Any:
        """Run the node of ``task`` once on the executor; return its output or raise."""
        payload, offered = self._payload(task, ctx, run)
        emit = _emitter(ctx) if payload.streams else None
        policy = task.timeout
        limit = policy.run_timeout if policy is not None else None
        start = time.monotonic()
        future = self.executor.submit(payload, emit)
        try:
            result = future.result(limit)
        except concurrent.futures.TimeoutError:
            self.executor.cancel(future)
            _give_back(task, offered, None)
            raise NodeTimeoutError(
                task.name,
                time.monotonic() - start,
                kind="run",
                run_timeout=limit,
                idle_timeout=policy.idle_timeout if policy is not None else None,
            ) from None
        except BaseException:
            self.executor.cancel(future)
            _give_back(task, offered, None)
            raise
        return self._settle(task, ctx, result, offered)

    async def acall(self, task: Task, ctx: TaskContext, run: RunContext) -> Any:
        """Async twin of :meth:`call` (the caller applies the task's timeout policy)."""
        payload, offered = self._payload(task, ctx, run)
        emit = _emitter(ctx) if payload.streams else None
        future = await self.executor.asubmit(payload, emit)
        try:
            result = await future
        except BaseException:
            future.cancel()
            _give_back(task, offered, None)
            raise
        return self._settle(task, ctx, result, offered)


def _emitter(ctx: TaskContext) -> Any:
    """Where a remote task's chunks go: heartbeats to the task's heartbeat (its idle
    timeout), the rest to its stream writer (which also counts them as progress)."""
    writer = ctx.stream_writer

    def emit(chunk: Any) -> None:
        if isinstance(chunk, Heartbeat):
            ctx.runtime.heartbeat()
        else:
            writer(chunk)

    return emit


# ---------------------------------------------------------------------- resume values
class PortableScratchpad(Scratchpad):
    """A task's interrupt bookkeeping that can travel to a worker and back."""

    __slots__ = ()

    def __reduce__(self) -> Any:
        rs = self.resume_state
        state = None
        if rs is not None:
            state = (rs.null is not _MISSING, None if rs.null is _MISSING else rs.null, rs.by_id)
        pending = self.pending_value
        return (
            _rebuild,
            (
                self.step,
                self.stop,
                self.resume,
                self.asked,
                pending is not _MISSING,
                None if pending is _MISSING else pending,
                state,
                self.strict,
                self.node,
            ),
        )


def _rebuild(
    step: int,
    stop: int,
    resume: list[Any],
    asked: list[Any],
    has_pending: bool,
    pending: Any,
    state: tuple[bool, Any, dict[str, Any]] | None,
    strict: bool,
    node: str,
) -> PortableScratchpad:
    resume_state = None
    if state is not None:
        has_null, null, by_id = state
        resume_state = ResumeState(null if has_null else _MISSING, by_id)
    return PortableScratchpad(
        step=step,
        stop=stop,
        resume=resume,
        asked=asked,
        pending_value=pending if has_pending else _MISSING,
        resume_state=resume_state,
        strict=strict,
        node=node,
    )


def _offer(task: Task, run: RunContext) -> tuple[PortableScratchpad | None, Any]:
    """The scratchpad the worker gets, with the run's answers this task may consume.

    The answers offered are taken out of the run's shared resume state (so no other
    task consumes them meanwhile); :func:`_give_back` returns those left unused.
    """
    sp = task.scratchpad
    if sp is None:
        return None, None
    shared = sp.resume_state
    offered_state = None
    offered: tuple[bool, dict[str, Any]] | None = None
    if shared is not None:
        with shared._lock:
            mine: dict[str, Any] = {}
            if shared.by_id:
                ids = {
                    interrupt_id(task.ns, i) for i in range(len(sp.resume) + len(shared.by_id) + 1)
                }
                for iid in ids & shared.by_id.keys():
                    mine[iid] = shared.by_id.pop(iid)
            null = _MISSING
            if shared.null is not _MISSING and task.resuming:
                null, shared.null = shared.null, _MISSING
        offered_state = ResumeState(null, mine)
        offered = (null is not _MISSING, mine)
    scratchpad = PortableScratchpad(
        step=sp.step,
        stop=sp.stop,
        resume=list(sp.resume),
        asked=list(sp.asked),
        pending_value=sp.pending_value,
        resume_state=offered_state,
        strict=sp.strict,
        node=sp.node,
    )
    return scratchpad, (offered, offered_state)


def _give_back(task: Task, offered: Any, after: Scratchpad | None) -> None:
    """Record the answers the worker consumed; return the unused ones to the run."""
    sp = task.scratchpad
    if sp is None or offered is None:
        return
    given, sent_state = offered
    if after is not None:
        sp.resume[:] = after.resume
        sp.asked[:] = after.asked
        sp.pending_value = after.pending_value
        left = after.resume_state
    else:
        left = sent_state
    shared = sp.resume_state
    if given is None or shared is None or left is None:
        return
    with shared._lock:
        for iid, value in left.by_id.items():
            shared.by_id.setdefault(iid, value)
        if left.null is not _MISSING and shared.null is _MISSING:
            shared.null = left.null
