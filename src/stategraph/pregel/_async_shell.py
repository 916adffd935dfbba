"""The asynchronous shell: drives :class:`~stategraph.pregel._loop.drive.Loop` on asyncio.

Async nodes are awaited as tasks; sync nodes run in a worker thread so they never
block the event loop. Saver effects use the saver's async methods.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
import weakref
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator
from typing import TYPE_CHECKING, Any

from stategraph.errors import (
    GraphBubbleUp,
    GraphInterrupt,
    NodeCancelledError,
    NodeTimeoutError,
    is_invalid_resume,
    sync_timeout_error,
)
from stategraph.observe import aresolve
from stategraph.pregel import _effects as fx
from stategraph.pregel._async_context import await_in_context
from stategraph.pregel._attempt import (
    after_failure,
    arun_writers,
    asettle_calls,
    enter,
    leave,
    make_context,
    record_failure,
)
from stategraph.pregel._cache_io import apply_cache_hits, cache_entries, cache_lookup_keys
from stategraph.pregel._call import NodeCall
from stategraph.pregel._lease_guard import acquire_async, fenced
from stategraph.pregel._sync_shell import _streams_while_running
from stategraph.pregel._watch import RunWatch

if TYPE_CHECKING:
    from stategraph.observe._fanout import Observers
    from stategraph.observe._protocol import RunRecord
    from stategraph.pregel._async_chunks import ChunkQueue
    from stategraph.pregel._loop.drive import Loop
    from stategraph.pregel._task import Task
    from stategraph.types import TimeoutPolicy

__all__ = ["drive_async", "run_task_async", "call_with_timeout", "Beat"]

_DONE = object()


class Beat:
    """Time of the last sign of progress of a node with an idle timeout."""

    __slots__ = ("last",)

    def __init__(self) -> None:
        self.last = time.monotonic()

    def touch(self) -> None:
        self.last = time.monotonic()


async def call_with_timeout(
    policy: TimeoutPolicy | None, name: str, coro: Any, beat: Beat | None
) -> Any:
    """Await ``coro`` under ``policy``; raise ``NodeTimeoutError`` naming ``name``.

    The idle limit needs ``beat`` (the time of the last progress signal); without it
    only the run limit applies.
    """
    run_limit = policy.run_timeout if policy is not None else None
    idle_limit = policy.idle_timeout if policy is not None else None
    if run_limit is None and (idle_limit is None or beat is None):
        return await coro
    start = time.monotonic()
    if beat is not None:
        beat.last = start
    inner = asyncio.ensure_future(coro)
    try:
        while True:
            now = time.monotonic()
            waits = []
            if run_limit is not None:
                waits.append(start + run_limit - now)
            if idle_limit is not None and beat is not None:
                waits.append(beat.last + idle_limit - now)
            done, _ = await asyncio.wait({inner}, timeout=max(0.0, min(waits)))
            if inner in done:
                return inner.result()
            now = time.monotonic()
            kind = None
            if run_limit is not None and now - start >= run_limit:
                kind = "run"
            elif idle_limit is not None and beat is not None and now - beat.last >= idle_limit:
                kind = "idle"
            if kind is not None:
                raise NodeTimeoutError(
                    name,
                    now - start,
                    kind=kind,
                    run_timeout=run_limit,
                    idle_timeout=idle_limit,
                )
    finally:
        if not inner.done():
            inner.cancel()
            try:
                await inner
            except BaseException:
                pass


async def run_task_async(task: Task, loop: Loop) -> None:
    """Run one task to completion (with retries) on the event loop."""
    run = loop.run
    proc = task.node.proc
    policy = task.timeout
    beat = Beat() if policy is not None and policy.idle_timeout is not None else None
    ctx = make_context(
        task,
        run,
        loop.step,
        heartbeat=beat.touch if beat is not None else None,
        auto_refresh=policy is not None and policy.refresh_on == "auto",
    )
    failures = 0
    if type(proc) is NodeCall:  # most nodes: no attribute probing
        is_graph, is_async, has_twin = False, proc.is_async, proc.atwin is not None
    else:
        is_graph = hasattr(proc, "ainvoke") and hasattr(proc, "nodes")
        is_async = is_graph or getattr(proc, "is_async", False)
        has_twin = getattr(proc, "atwin", None) is not None
    remote = run.remote
    if remote is not None and not remote.takes(task):
        remote = None
    # the library's own non-blocking functions (a graph's __start__) need no thread
    inline = remote is None and not is_async and getattr(proc, "inline", False)
    if policy is not None and not (is_async or has_twin) and remote is None:
        # e.g. Send(..., timeout=...) to a synchronous node: a thread cannot be stopped
        record_failure(task, sync_timeout_error(f"Node '{task.name}'"))
        return
    obs = run.observers
    while True:
        token = enter(ctx)
        try:
            if obs is not None:
                await aresolve(obs.task_started(run, task, failures + 1))
            if inline:
                output = proc(task.input, ctx)
            elif is_async or has_twin or remote is not None:
                if remote is not None:
                    call = remote.acall(task, ctx, run)
                elif is_graph:
                    call = proc.ainvoke(task.input)
                elif is_async:
                    call = proc(task.input, ctx)
                else:
                    call = proc.call_twin(task.input, ctx)
                if policy is None:
                    output = await call
                else:
                    output = await call_with_timeout(policy, task.name, call, beat)
            else:
                cvars = contextvars.copy_context()
                output = await asyncio.get_running_loop().run_in_executor(
                    None, cvars.run, proc, task.input, ctx
                )
            pad = ctx.built_scratchpad
            if pad is not None and pad.inflight:
                await asettle_calls(ctx)
            await arun_writers(task, output)
            if obs is not None:
                await aresolve(obs.task_finished(run, task, output))
            return
        except asyncio.CancelledError as exc:
            if _cancelled_from_outside():
                raise
            # the node raised CancelledError itself: a failure of the node, not a
            # cancellation of the run
            failures += 1
            error = NodeCancelledError(task.name)
            error.__cause__ = exc
            delay = await _attempt_failed(obs, run, task, error, failures)
            if delay is None:
                return
        except Exception as exc:
            if isinstance(exc, GraphBubbleUp):
                await asettle_calls(ctx)
            failures += 1
            delay = await _attempt_failed(obs, run, task, exc, failures)
            if delay is None:
                return
        except BaseException as exc:
            if obs is not None:
                await aresolve(obs.task_failed(run, task, exc, False))
            raise
        finally:
            leave(token)
        await asyncio.sleep(delay)
        ctx.next_attempt()


async def _attempt_failed(
    obs: Observers | None, run: RunRecord, task: Task, error: Exception, failures: int
) -> float | None:
    """What follows a failed attempt (:func:`after_failure`: the seconds before the
    retry, or ``None``), reported to the run's observers ``obs`` as the attempt's end."""
    delay = after_failure(task, error, failures)
    if obs is not None:
        await aresolve(obs.task_failed(run, task, error, delay is not None))
    return delay


# Step tasks the run itself cancelled (a failed sibling, a step timeout, the caller
# cancelling the run). Python 3.10 has no ``Task.cancelling()``, so this is how a node
# that raised ``CancelledError`` on its own is told apart there.
_CANCELLED_BY_RUN: weakref.WeakSet[asyncio.Future[Any]] = weakref.WeakSet()


def _cancelled_from_outside() -> bool:
    """Whether the running asyncio task is being cancelled (by its caller).

    Uses ``Task.cancelling()`` on Python 3.11+. Before that, a step task counts as
    cancelled from outside when the run cancelled it, and a task the run did not start
    (a node run inline in the caller's task) always does.
    """
    current = asyncio.current_task()
    cancelling = getattr(current, "cancelling", None)
    if cancelling is not None:
        return bool(cancelling() > 0)
    return current is None or current in _CANCELLED_BY_RUN or current not in _STEP_TASKS


# Step tasks started by ``_execute`` (Python 3.10 needs to know which tasks are its own).
_STEP_TASKS: weakref.WeakSet[asyncio.Future[Any]] = weakref.WeakSet()
_TRACK_STEP_TASKS = not hasattr(asyncio.Task, "cancelling")
"""Python 3.10: keep ``_STEP_TASKS`` and ``_CANCELLED_BY_RUN`` (3.11+ asks the task)."""


class _AsyncSaver:
    """Performs saver effects; non-blocking ones are chained so they stay in order.

    As in the sync shell, a blocking ``put_writes`` of a step's last task may be held
    (``hold=True``, for a saver that can make several calls in one transaction) and
    made with the next blocking call (the step's checkpoint), or alone by
    :meth:`release`: before the saver is read, or at a flush (the run's end or failure).
    """

    def __init__(self, saver: Any, token: int | None = None) -> None:
        self.saver = saver
        self.token = token  # the run's fencing token, added to every put/put_writes
        self.path_ok = True
        self.batched: Any = None  # awaits a list of (sync method name, args) in one go
        if saver is not None:
            # (imported here: a run without a saver does not load the savers' base)
            from stategraph.checkpoint._batched import abatches

            self.path_ok = fx.takes_task_path(saver, "aput_writes")
            self.batched = abatches(saver)
        self.held: tuple[str, tuple[Any, ...]] | None = None
        self.last: asyncio.Task[Any] | None = None

    async def perform(
        self, effect: fx.Put | fx.PutWrites, blocking: bool, hold: bool = False
    ) -> Any:
        """Await the saver call of ``effect`` (``aput``, or ``aput_writes``: without
        the task path for a saver that takes none) with the run's fencing token: now
        when ``blocking`` (after the chained calls, with the held call in one
        transaction), else chained after them. ``hold`` (a blocking ``put_writes`` of
        a step's last task) keeps the call for the next blocking one, when the saver
        can batch."""
        config = effect.config if self.token is None else fenced(effect.config, self.token)
        name, args = fx.saver_call(effect, config, self.path_ok)
        if blocking:
            await self.flush(release=False)
            held = self.held
            if held is None:
                if hold and self.batched is not None and name == "put_writes":
                    self.held = (name, args)
                    return None
                return await getattr(self.saver, "a" + name)(*args)
            self.held = None
            return await self.batched((held, (name, args)))
        await self.release()
        method = getattr(self.saver, "a" + name)
        prev = self.last

        async def chained() -> Any:
            if prev is not None:
                await prev
            return await method(*args)

        self.last = asyncio.ensure_future(chained())
        return None

    async def perform_now(self, effect: Any) -> Any:
        """Perform a saver effect of the loop's way out of a failed step, awaiting it:
        what the loop is sent back (the tuple a ``GetTuple`` reads, else ``None``)."""
        match effect:
            case fx.GetTuple(config=config):
                await self.release()
                return await self.saver.aget_tuple(config)
            case fx.Put() | fx.PutWrites():
                await self.perform(effect, True)
            case fx.Flush():
                await self.flush()
        return None

    async def release(self) -> None:
        """Await the held call now, alone (before any other use of the saver)."""
        held = self.held
        if held is not None:
            self.held = None
            await getattr(self.saver, "a" + held[0])(*held[1])

    async def flush(self, release: bool = True) -> None:
        """Await the chained calls, then the held call unless ``release`` is false."""
        if self.last is not None:
            last, self.last = self.last, None
            await last
        if release:
            await self.release()


def drive_async(loop: Loop, chunks: ChunkQueue | None) -> AsyncGenerator[Any, None]:
    """Drive ``loop`` to the end, yielding stream chunks; the output is left on ``loop``.

    Returns an async generator (``aclose()`` it when stopping early). A run without a
    lease of its own to take is driven directly, without a wrapping generator.
    """
    if loop.run.lease_settings is None:
        return _drive_async(loop, chunks, loop.run.guard)
    return _drive_leased(loop, chunks)


async def _drive_leased(loop: Loop, chunks: ChunkQueue | None) -> AsyncGenerator[Any, None]:
    """:func:`drive_async` for a root run that must hold its thread's lease."""
    run = loop.run
    assert run.lease_settings is not None
    # one writer per thread: take the lease before reading the thread
    guard = run.guard = await acquire_async(loop.saver, run, run.lease_settings)
    inner = _drive_async(loop, chunks, guard)
    try:
        async for chunk in inner:
            yield chunk
    finally:
        await inner.aclose()
        if guard is not None:
            await guard.aclose(finished=not guard.stopped_run(loop.status))


async def _drive_async(
    loop: Loop, chunks: ChunkQueue | None, guard: Any
) -> AsyncGenerator[Any, None]:
    gen = loop.drive()
    saver = _AsyncSaver(loop.saver, guard.token_for(loop.saver) if guard is not None else None)
    value: Any = None
    watch = RunWatch(loop) if loop.run.observers is not None else None
    # the chunks the run streamed and the caller has not received yet
    pending: deque[Any] = chunks.items if chunks is not None else deque()
    try:
        if watch is not None:
            await aresolve(watch.started())
        effect = gen.send(None)
        while True:
            while pending:
                yield pending.popleft()
            value = None
            match effect:
                case fx.Execute(tasks=tasks):
                    if watch is not None:
                        await aresolve(watch.step_started(tasks))
                    try:
                        if _runs_in_place(loop, tasks, chunks):
                            await _run_in_place(loop, tasks[0], saver)
                        else:
                            async for chunk in _execute(loop, tasks, saver, chunks):
                                yield chunk
                    except (Exception, asyncio.CancelledError) as exc:
                        # the run was cancelled (or a step timed out): let the loop save
                        # what it must (durability="exit" saves now), then re-raise
                        await _unwind(gen, exc, saver)
                    if watch is not None:
                        await aresolve(watch.step_finished())
                case fx.Put():
                    await saver.perform(effect, effect.blocking)
                    if watch is not None:
                        await aresolve(watch.checkpoint(effect))
                case fx.PutWrites():
                    await saver.perform(effect, effect.blocking)
                case fx.GetTuple(config=config):
                    await saver.release()
                    value = await loop.saver.aget_tuple(config)
                case fx.DeltaHistory(config=config, channels=channels):
                    await saver.release()
                    value = await loop.saver.aget_delta_channel_history(
                        config=config, channels=channels
                    )
                case fx.GetBefore():
                    await saver.release()
                    value = await fx.aget_before(loop.saver, effect)
                case fx.Flush():
                    await saver.flush()
            effect = gen.send(value)
    except StopIteration as stop:
        loop.output = stop.value
        while pending:
            yield pending.popleft()
        if watch is not None:
            await aresolve(watch.finished(stop.value))
        return
    except GraphInterrupt as exc:
        while pending:
            yield pending.popleft()
        if watch is not None:
            await aresolve(watch.interrupted(exc))
        raise
    except BaseException as exc:
        if isinstance(exc, Exception):
            # what the run streamed before failing still reaches the caller
            while pending:
                yield pending.popleft()
        if watch is not None:
            await aresolve(watch.failed(exc))
        raise
    finally:
        await saver.flush()


async def _unwind(gen: Any, exc: BaseException, saver: _AsyncSaver) -> None:
    """Throw ``exc`` into the loop and perform the saver effects of its way out."""
    try:
        effect = gen.throw(exc)
        while True:
            effect = gen.send(await saver.perform_now(effect))
    except StopIteration:
        raise exc from None


async def _finish(loop: Loop, task: Task, saver: _AsyncSaver, last: bool) -> list[Task]:
    """Record a finished task; returns the tasks it starts in the same step (handlers).

    ``last``: no other task of the step is running or waiting, so its writes may be
    held for the step's checkpoint (see :class:`_AsyncSaver`)."""
    spawned: list[Task] = []
    for eff in loop.task_finished(task):
        if isinstance(eff, fx.Spawn):
            spawned.append(eff.task)
        else:
            await saver.perform(eff, eff.blocking, last)
    return spawned


async def _cancel_all(running: dict[asyncio.Future[Any], Task]) -> None:
    """Cancel the step's running tasks and wait until they have stopped."""
    for fut in running:
        if _TRACK_STEP_TASKS:
            _CANCELLED_BY_RUN.add(fut)
        fut.cancel()
    await asyncio.gather(*running, return_exceptions=True)
    running.clear()


def _runs_in_place(loop: Loop, tasks: list[Task], chunks: ChunkQueue | None) -> bool:
    """Whether the step is one task to await in the driving coroutine, no cache to ask."""
    return len(tasks) == 1 and loop.run.cache is None and _alone_in_place(loop, tasks[0], chunks)


def _alone_in_place(loop: Loop, task: Task, chunks: ChunkQueue | None) -> bool:
    """Whether ``task``, alone in its step, is awaited in place.

    As in the sync shell: a task that cannot stream while it runs, in a graph without
    a step timeout, runs in the driving coroutine (no asyncio task, no wait on the
    chunk queue). Its context variables are isolated all the same (see
    :func:`_run_in_place`).
    """
    return getattr(loop.graph, "step_timeout", None) is None and (
        chunks is None or not _streams_while_running(loop, task)
    )


async def _run_in_place(loop: Loop, task: Task, saver: _AsyncSaver) -> None:
    """Await ``task`` and the error handlers its failure starts, one after the other.

    Each runs in a copy of the current context, as it would in an asyncio task of its
    own: the context variables a node (or its routing functions) sets stay with it.
    """
    inline = [task]
    while inline:
        task = inline.pop(0)
        await await_in_context(contextvars.copy_context(), run_task_async(task, loop))
        inline.extend(await _finish(loop, task, saver, True))


async def _execute(
    loop: Loop, tasks: list[Task], saver: _AsyncSaver, chunks: ChunkQueue | None
) -> AsyncIterator[Any]:
    cache = loop.run.cache
    if cache is not None:
        keys = cache_lookup_keys(tasks)
        if keys:
            hits = await cache.aget(list(keys))
            for task in apply_cache_hits(tasks, keys, hits):
                await _finish(loop, task, saver, False)
            tasks = [t for t in tasks if not t.done]
    step_timeout = getattr(loop.graph, "step_timeout", None)
    if len(tasks) == 1 and _alone_in_place(loop, tasks[0], chunks):
        await _run_in_place(loop, tasks[0], saver)
    elif tasks:
        limit = loop.run.max_concurrency or len(tasks)
        pending_tasks = list(tasks)
        running: dict[asyncio.Future[Any], Task] = {}

        def submit(task: Task) -> None:
            fut = asyncio.ensure_future(run_task_async(task, loop))
            if _TRACK_STEP_TASKS:
                _STEP_TASKS.add(fut)
            running[fut] = task

        while pending_tasks and len(running) < limit:
            submit(pending_tasks.pop(0))
        deadline = time.monotonic() + step_timeout if step_timeout else None
        try:
            async for chunk in _gather(
                loop, saver, chunks, running, pending_tasks, submit, limit, deadline, step_timeout
            ):
                yield chunk
        except BaseException:
            # cancelled from outside (or the consumer went away): stop the step's tasks
            if running:
                await _cancel_all(running)
            raise
    if cache is not None:
        entries = cache_entries(tasks)
        if entries:
            await cache.aset(entries)


async def _gather(
    loop: Loop,
    saver: _AsyncSaver,
    chunks: ChunkQueue | None,
    running: dict[asyncio.Future[Any], Task],
    pending_tasks: list[Task],
    submit: Any,
    limit: int,
    deadline: float | None,
    step_timeout: float | None,
) -> AsyncIterator[Any]:
    """Wait for the step's running tasks, yielding chunks as they come."""
    failed = False
    while running:
        if failed:
            # a node failed for good: the run fails now, siblings are cancelled
            await _cancel_all(running)
            break
        waiters: set[asyncio.Future[Any]] = set(running)
        arrived: asyncio.Future[None] | None = None
        if chunks is not None:
            arrived = chunks.arrived()
            waiters.add(arrived)
        wait = None if deadline is None else max(0.0, deadline - time.monotonic())
        try:
            done, _ = await asyncio.wait(waiters, timeout=wait, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if chunks is not None and arrived is not None:
                chunks.forget(arrived)
        if not done:
            names = ", ".join(sorted(t.name for t in running.values()))
            await _cancel_all(running)
            raise asyncio.TimeoutError(
                f"Step {loop.step} did not finish within step_timeout={step_timeout}s "
                f"(cancelled: {names})."
            )
        if chunks is not None and arrived is not None:
            done.discard(arrived)
            # every chunk produced so far, before the outcome of the tasks that finished
            while chunks.items:
                yield chunks.items.popleft()
        # in the order the tasks were started, never in the set's (address) order: tasks
        # that finish in the same turn of the event loop stream the same way every run
        for fut in [f for f in running if f in done]:
            task = running.pop(fut)
            exc = fut.exception()
            if exc is not None:
                record_failure(task, exc)
            spawned = await _finish(loop, task, saver, not running and not pending_tasks)
            if spawned:
                # error handlers start at once, ahead of tasks waiting for a slot
                pending_tasks[:0] = spawned
            elif (
                task.error is not None
                and not isinstance(task.error, GraphBubbleUp)
                and not is_invalid_resume(task.error)
            ):
                # an answer rejected by response_schema fails the run only once the
                # other answered tasks have finished (their side effects must not
                # happen twice); any other failure stops the step now
                failed = True
            while pending_tasks and not failed and len(running) < limit:
                submit(pending_tasks.pop(0))
