"""The asynchronous shell: drives :class:`~stategraph.pregel.loop.Loop` on asyncio.

Async nodes are awaited as tasks; sync nodes run in a worker thread so they never
block the event loop. Saver effects use the saver's async methods.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from stategraph.errors import GraphBubbleUp, GraphInterrupt, NodeTimeoutError
from stategraph.pregel import effects as fx
from stategraph.pregel.attempt import (
    after_failure,
    arun_writers,
    enter,
    leave,
    make_context,
    record_failure,
)
from stategraph.pregel.cache_io import apply_cache_hits, cache_entries, cache_lookup_keys

if TYPE_CHECKING:
    from stategraph.pregel.loop import Loop
    from stategraph.pregel.task import Task

__all__ = ["drive_async", "run_task_async"]

_DONE = object()


class _Beat:
    """Time of the last sign of progress of a node with an idle timeout."""

    __slots__ = ("last",)

    def __init__(self) -> None:
        self.last = time.monotonic()

    def touch(self) -> None:
        self.last = time.monotonic()


async def _call_with_timeout(task: Task, coro: Any, beat: _Beat | None) -> Any:
    """Await ``coro`` under the task's ``TimeoutPolicy`` (run and idle limits)."""
    policy = task.timeout
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
                    task.name,
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
    beat = _Beat() if policy is not None and policy.idle_timeout is not None else None
    ctx = make_context(
        task,
        run,
        loop.step,
        heartbeat=beat.touch if beat is not None else None,
        auto_refresh=policy is not None and policy.refresh_on == "auto",
    )
    failures = 0
    is_graph = hasattr(proc, "ainvoke") and hasattr(proc, "nodes")
    is_async = is_graph or getattr(proc, "is_async", False)
    while True:
        token = enter(ctx)
        try:
            if is_graph:
                output = await _call_with_timeout(task, proc.ainvoke(task.input), beat)
            elif is_async:
                output = await _call_with_timeout(task, proc(task.input, ctx), beat)
            else:
                cvars = contextvars.copy_context()
                output = await asyncio.get_running_loop().run_in_executor(
                    None, cvars.run, proc, task.input, ctx
                )
            await arun_writers(task, output)
            return
        except Exception as exc:
            failures += 1
            delay = after_failure(task, exc, failures)
            if delay is None:
                return
        finally:
            leave(token)
        await asyncio.sleep(delay)


class _AsyncSaver:
    """Performs saver effects; non-blocking ones are chained so they stay in order."""

    def __init__(self, saver: Any) -> None:
        self.saver = saver
        self.last: asyncio.Task[Any] | None = None

    async def call(self, name: str, args: tuple[Any, ...], blocking: bool) -> Any:
        method = getattr(self.saver, "a" + name)
        if blocking:
            await self.flush()
            return await method(*args)
        prev = self.last

        async def chained() -> Any:
            if prev is not None:
                await prev
            return await method(*args)

        self.last = asyncio.ensure_future(chained())
        return None

    async def flush(self) -> None:
        if self.last is not None:
            last, self.last = self.last, None
            await last


async def drive_async(loop: Loop, chunks: asyncio.Queue[Any] | None) -> AsyncIterator[Any]:
    """Drive ``loop`` to the end, yielding stream chunks; the output is left on ``loop``."""
    gen = loop.drive()
    saver = _AsyncSaver(loop.saver)
    value: Any = None
    try:
        effect = gen.send(None)
        while True:
            if chunks is not None:
                while not chunks.empty():
                    yield chunks.get_nowait()
            tag = effect[0]
            value = None
            if tag == fx.GET_TUPLE:
                value = await loop.saver.aget_tuple(effect[1])
            elif tag == fx.PUT:
                await saver.call("put", effect[1:5], effect[5])
            elif tag == fx.PUT_WRITES:
                await saver.call("put_writes", effect[1:5], effect[5])
            elif tag == fx.EXECUTE:
                async for chunk in _execute(loop, effect[1], saver, chunks):
                    yield chunk
            elif tag == fx.FLUSH:
                await saver.flush()
            effect = gen.send(value)
    except StopIteration as stop:
        loop.output = stop.value
        if chunks is not None:
            while not chunks.empty():
                yield chunks.get_nowait()
        return
    except GraphInterrupt:
        if chunks is not None:
            while not chunks.empty():
                yield chunks.get_nowait()
        raise
    finally:
        await saver.flush()


async def _finish(loop: Loop, task: Task, saver: _AsyncSaver) -> None:
    for eff in loop.task_finished(task):
        await saver.call("put_writes", eff[1:5], eff[5])


async def _execute(
    loop: Loop, tasks: list[Task], saver: _AsyncSaver, chunks: asyncio.Queue[Any] | None
) -> AsyncIterator[Any]:
    cache = loop.run.cache
    if cache is not None:
        keys = cache_lookup_keys(tasks)
        if keys:
            hits = await cache.aget(list(keys))
            for task in apply_cache_hits(tasks, keys, hits):
                await _finish(loop, task, saver)
            tasks = [t for t in tasks if not t.done]
    if len(tasks) == 1 and chunks is None:
        await run_task_async(tasks[0], loop)
        await _finish(loop, tasks[0], saver)
    elif tasks:
        limit = loop.run.max_concurrency or len(tasks)
        pending_tasks = list(tasks)
        running: dict[asyncio.Future[Any], Task] = {}
        failed = False

        def submit(task: Task) -> None:
            fut = asyncio.ensure_future(run_task_async(task, loop))
            running[fut] = task

        while pending_tasks and len(running) < limit:
            submit(pending_tasks.pop(0))
        while running:
            waiters: set[asyncio.Future[Any]] = set(running)
            getter: asyncio.Future[Any] | None = None
            if chunks is not None:
                getter = asyncio.ensure_future(chunks.get())
                waiters.add(getter)
            done, _ = await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
            if getter is not None:
                if getter not in done:
                    getter.cancel()
                    try:
                        await getter
                    except asyncio.CancelledError:
                        pass
                if getter.done() and not getter.cancelled():
                    yield getter.result()
                done.discard(getter)
            for fut in done:
                task = running.pop(fut)
                exc = fut.exception()
                if exc is not None:
                    record_failure(task, exc)
                await _finish(loop, task, saver)
                if task.error is not None and not isinstance(task.error, GraphBubbleUp):
                    failed = True
                if pending_tasks and not failed:
                    submit(pending_tasks.pop(0))
    if cache is not None:
        entries = cache_entries(tasks)
        if entries:
            await cache.aset(entries)
