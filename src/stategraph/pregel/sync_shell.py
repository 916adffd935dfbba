"""The synchronous shell: drives :class:`~stategraph.pregel.loop.Loop` on threads.

It performs the loop's effects with the saver's sync methods, runs a step's tasks
inline (one task) or on a thread pool created once per run (several tasks), sleeps
between retries, and yields stream chunks as they are produced.
"""

from __future__ import annotations

import contextvars
import queue
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from stategraph.errors import GraphBubbleUp, GraphInterrupt
from stategraph.pregel import effects as fx
from stategraph.pregel.attempt import (
    after_failure,
    enter,
    leave,
    make_context,
    record_failure,
    run_writers,
)
from stategraph.pregel.cache_io import apply_cache_hits, cache_entries, cache_lookup_keys

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

    from stategraph.pregel.loop import Loop
    from stategraph.pregel.task import Task

__all__ = ["drive_sync", "run_task_sync"]

_DONE = object()


def run_task_sync(task: Task, loop: Loop) -> None:
    """Run one task to completion (with retries) in the current thread."""
    run = loop.run
    proc = task.node.proc
    if getattr(proc, "is_async", False):
        record_failure(
            task,
            TypeError(
                f"Node '{task.name}' is an async function; run the graph with ainvoke()/astream()."
            ),
        )
        return
    ctx = make_context(task, run, loop.step)
    failures = 0
    is_graph = hasattr(proc, "invoke") and hasattr(proc, "nodes")
    while True:
        token = enter(ctx)
        try:
            output = proc.invoke(task.input) if is_graph else proc(task.input, ctx)
            run_writers(task, output)
            return
        except Exception as exc:
            failures += 1
            delay = after_failure(task, exc, failures)
            if delay is None:
                return
        finally:
            leave(token)
        time.sleep(delay)


class _Saver:
    """Performs saver effects; non-blocking ones run in order on one background thread.

    A single worker thread drains a FIFO queue, so calls reach the saver in exactly the
    order the loop yielded them. After a failed call the worker skips the rest; the
    error is raised by the next blocking call or flush.
    """

    def __init__(self, saver: Any) -> None:
        self.saver = saver
        self.queue: queue.SimpleQueue[Any] | None = None
        self.thread: threading.Thread | None = None
        self.pending = 0
        self.error: BaseException | None = None
        self.cond = threading.Condition()

    def _work(self) -> None:
        assert self.queue is not None
        while True:
            item = self.queue.get()
            if item is None:
                return
            name, args = item
            if self.error is None:
                try:
                    getattr(self.saver, name)(*args)
                except BaseException as exc:
                    self.error = exc
            with self.cond:
                self.pending -= 1
                if self.pending == 0:
                    self.cond.notify_all()

    def call(self, name: str, args: tuple[Any, ...], blocking: bool) -> Any:
        if blocking:
            self.flush()
            return getattr(self.saver, name)(*args)
        if self.thread is None:
            self.queue = queue.SimpleQueue()
            self.thread = threading.Thread(target=self._work, name="stategraph-saver", daemon=True)
            self.thread.start()
        assert self.queue is not None
        with self.cond:
            self.pending += 1
        self.queue.put((name, args))
        return None

    def flush(self) -> None:
        if self.thread is not None:
            with self.cond:
                while self.pending:
                    self.cond.wait()
        if self.error is not None:
            error, self.error = self.error, None
            raise error

    def close(self) -> None:
        try:
            self.flush()
        finally:
            if self.thread is not None and self.queue is not None:
                self.queue.put(None)
                self.thread.join()
                self.thread = None


def drive_sync(loop: Loop, chunks: queue.SimpleQueue[Any] | None) -> Iterator[Any]:
    """Drive ``loop`` to the end, yielding stream chunks from ``chunks`` as they come.

    The generator's return value (``StopIteration.value``) is the loop's output.
    """
    gen = loop.drive()
    saver = _Saver(loop.saver)
    pool: list[ThreadPoolExecutor] = []
    value: Any = None
    try:
        effect = gen.send(None)
        while True:
            if chunks is not None:
                yield from _drain(chunks)
            tag = effect[0]
            value = None
            if tag == fx.GET_TUPLE:
                value = loop.saver.get_tuple(effect[1])
            elif tag == fx.PUT:
                saver.call("put", effect[1:5], effect[5])
            elif tag == fx.PUT_WRITES:
                saver.call("put_writes", effect[1:5], effect[5])
            elif tag == fx.EXECUTE:
                yield from _execute(loop, effect[1], saver, pool, chunks)
            elif tag == fx.FLUSH:
                saver.flush()
            effect = gen.send(value)
    except StopIteration as stop:
        if chunks is not None:
            yield from _drain(chunks)
        return stop.value
    except GraphInterrupt:
        if chunks is not None:
            yield from _drain(chunks)
        raise
    finally:
        try:
            saver.close()
        finally:
            for p in pool:
                # running siblings finish (and are recorded) before the run ends
                p.shutdown(wait=True)


def _drain(chunks: queue.SimpleQueue[Any]) -> Iterator[Any]:
    while True:
        try:
            item = chunks.get_nowait()
        except queue.Empty:
            return
        if item is not _DONE:
            yield item


def _finish(loop: Loop, task: Task, saver: _Saver) -> None:
    for eff in loop.task_finished(task):
        saver.call("put_writes", eff[1:5], eff[5])


def _execute(
    loop: Loop,
    tasks: list[Task],
    saver: _Saver,
    pool: list[ThreadPoolExecutor],
    chunks: queue.SimpleQueue[Any] | None,
) -> Iterator[Any]:
    cache = loop.run.cache
    if cache is not None:
        keys = cache_lookup_keys(tasks)
        if keys:
            hits = cache.get(list(keys))
            for task in apply_cache_hits(tasks, keys, hits):
                _finish(loop, task, saver)
            tasks = [t for t in tasks if not t.done]
    if len(tasks) == 1:
        run_task_sync(tasks[0], loop)
        _finish(loop, tasks[0], saver)
    elif tasks:
        if not pool:
            from concurrent.futures import ThreadPoolExecutor

            workers = loop.run.max_concurrency or min(32, max(4, len(tasks)))
            pool.append(ThreadPoolExecutor(max_workers=workers, thread_name_prefix="stategraph"))
        executor = pool[0]
        done_q: queue.SimpleQueue[Any] = chunks if chunks is not None else queue.SimpleQueue()
        futures: dict[Future[Any], Task] = {}
        failed = False
        pending_tasks = list(tasks)
        limit = loop.run.max_concurrency or len(tasks)

        def submit(task: Task) -> None:
            ctx = contextvars.copy_context()
            fut = executor.submit(ctx.run, run_task_sync, task, loop)
            futures[fut] = task
            fut.add_done_callback(lambda f: done_q.put((_DONE, f)))

        while pending_tasks and len(futures) < limit:
            submit(pending_tasks.pop(0))
        while futures:
            item = done_q.get()
            if not (isinstance(item, tuple) and len(item) == 2 and item[0] is _DONE):
                yield item
                continue
            fut = item[1]
            if fut not in futures:
                continue
            task = futures.pop(fut)
            exc = fut.exception()
            if exc is not None:
                record_failure(task, exc)
            _finish(loop, task, saver)
            if task.error is not None and not isinstance(task.error, GraphBubbleUp):
                failed = True
            if pending_tasks and not failed:
                submit(pending_tasks.pop(0))
    if cache is not None:
        entries = cache_entries(tasks)
        if entries:
            cache.set(entries)
