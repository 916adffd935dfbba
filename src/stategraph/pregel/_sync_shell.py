"""The synchronous shell: drives :class:`~stategraph.pregel._loop.drive.Loop` on threads.

It performs the loop's effects with the saver's sync methods, runs a step's tasks
inline (one task) or on worker threads (a crew) the run borrows at its first such step
(several tasks; see :mod:`~stategraph.pregel._step_pool`), sleeps between retries, and
yields stream chunks as they are produced.
"""

from __future__ import annotations

import contextvars
import os
import queue
import threading
import time
from collections.abc import Generator, Iterator
from typing import TYPE_CHECKING, Any

from stategraph.errors import GraphBubbleUp, GraphInterrupt, sync_timeout_error
from stategraph.observe import resolve
from stategraph.pregel import _effects as fx
from stategraph.pregel._attempt import (
    after_failure,
    enter,
    leave,
    make_context,
    record_failure,
    run_writers,
    settle_calls,
)
from stategraph.pregel._cache_io import apply_cache_hits, cache_entries, cache_lookup_keys
from stategraph.pregel._call import NodeCall
from stategraph.pregel._lease_guard import acquire_sync, fenced
from stategraph.pregel._step_pool import StepPool

if TYPE_CHECKING:
    from stategraph.pregel._loop.drive import Loop
    from stategraph.pregel._task import Task

__all__ = ["drive_sync", "run_task_sync"]


class _Job:
    """One task of a parallel step, run on a worker thread of the run's crew; when it
    ends the job puts itself on the step's queue (which carries chunks too) as its note.

    It runs in a copy of the caller's context, taken when the job is made (on the
    caller's thread). ``error`` is what escaped the task's attempts (a
    ``BaseException``, or an error of an observer), recorded on the task by the caller.
    """

    __slots__ = ("ctx", "done", "error", "loop", "task")

    def __init__(self, task: Task, loop: Loop, done: queue.SimpleQueue[Any]) -> None:
        self.task = task
        self.loop = loop
        self.done = done
        self.ctx = contextvars.copy_context()
        self.error: BaseException | None = None

    def run(self) -> None:
        """Run the task (on a worker thread), then report the end."""
        try:
            self.ctx.run(run_task_sync, self.task, self.loop)
        except BaseException as exc:  # KeyboardInterrupt, SystemExit too: the caller decides
            self.error = exc
        self.done.put(self)


_PROBE = 1.0
"""Seconds between checks, while a step's tasks run, that the run's crew still serves."""
_STEP_END_MODES = frozenset({"values"})
"""Modes whose chunks come only when a step ends (those of a subgraph apart)."""
_LIVE_MODES = frozenset({"messages", "custom"})
"""Modes whose chunks a node produces while it runs: its task then runs on a worker
thread (even alone in its step) so the caller receives them as they come."""


def run_task_sync(task: Task, loop: Loop) -> None:
    """Run one task to completion (with retries) in the current thread."""
    run = loop.run
    proc = task.node.proc
    if type(proc) is NodeCall:  # most nodes: no attribute probing
        is_graph, is_async = False, proc.is_async
    else:
        is_graph = hasattr(proc, "invoke") and hasattr(proc, "nodes")
        is_async = getattr(proc, "is_async", False)
    if is_async:
        record_failure(
            task,
            TypeError(
                f"Node '{task.name}' is an async function; run the graph with ainvoke()/astream()."
            ),
        )
        return
    remote = run.remote
    if remote is not None and not remote.takes(task):
        remote = None
    if task.timeout is not None and not is_graph and remote is None:
        # e.g. Send(..., timeout=...) to a synchronous node: a thread cannot be stopped
        record_failure(task, sync_timeout_error(f"Node '{task.name}'"))
        return
    ctx = make_context(task, run, loop.step)
    failures = 0
    obs = run.observers
    while True:
        token = enter(ctx)
        try:
            if obs is not None:
                resolve(obs.task_started(run, task, failures + 1))
            if remote is not None:
                output = remote.call(task, ctx, run)
            else:
                output = proc.invoke(task.input) if is_graph else proc(task.input, ctx)
            if task.built_scratchpad is not None:  # (else no @task call was made)
                settle_calls(ctx)
            run_writers(task, output)
            if obs is not None:
                resolve(obs.task_finished(run, task, output))
            return
        except Exception as exc:
            if isinstance(exc, GraphBubbleUp):
                settle_calls(ctx)
            failures += 1
            delay = after_failure(task, exc, failures)
            if obs is not None:
                resolve(obs.task_failed(run, task, exc, delay is not None))
            if delay is None:
                return
        except BaseException as exc:
            if obs is not None:
                resolve(obs.task_failed(run, task, exc, False))
            raise
        finally:
            leave(token)
        time.sleep(delay)
        ctx.next_attempt()


# set on the threads of _Saver: a run finalized there by the garbage collector must not
# wait for any saver thread
_ON_SAVER_THREAD = threading.local()


class _Saver:
    """Performs saver effects; non-blocking ones run in order on one background thread.

    A single worker thread drains a FIFO queue, so calls reach the saver in exactly the
    order the loop yielded them. After a failed call the worker skips the rest; the
    error is raised by the next blocking call or flush.

    A blocking ``put_writes`` of a step's last task may be *held* (``hold=True``, for
    a saver whose ``batch()`` commits once): it is made together with the next
    blocking call, in one transaction (the step's checkpoint ``put``: one commit per
    step), or alone by :meth:`release`: before the saver is read, at a flush (the run's end
    or failure), or when the run is closed. (It never waits across a step: a step with
    a saver ends with its checkpoint ``put``, or the run stops.)
    """

    def __init__(self, saver: Any, token: int | None = None) -> None:
        self.saver = saver
        self.token = token  # the run's fencing token, added to every put/put_writes
        self.path_ok = True
        self.holds = False
        self.batched: Any = None
        if saver is not None:
            # (imported here: a run without a saver does not load the savers' base)
            from stategraph.checkpoint._batched import batches, perform_batched

            self.path_ok = fx.takes_task_path(saver, "put_writes")
            self.holds = batches(saver)
            self.batched = perform_batched
        self.held: tuple[str, tuple[Any, ...]] | None = None
        self.queue: queue.SimpleQueue[Any] | None = None
        self.thread: threading.Thread | None = None
        self.pending = 0
        self.error: BaseException | None = None
        self.cond = threading.Condition()
        self.pid = os.getpid()

    def _work(self) -> None:
        assert self.queue is not None
        _ON_SAVER_THREAD.active = True
        while True:
            # every call queued by now goes in one batch (one commit for a SQL saver)
            calls = [self.queue.get()]
            while True:
                try:
                    calls.append(self.queue.get_nowait())
                except queue.Empty:
                    break
            stop = None in calls
            if stop:
                calls = calls[: calls.index(None)]
            if calls:
                self._perform(calls)
                with self.cond:
                    self.pending -= len(calls)
                    if self.pending == 0:
                        self.cond.notify_all()
            if stop:
                return

    def _perform(self, calls: list[tuple[str, tuple[Any, ...]]]) -> None:
        """Make ``calls`` in order (in one ``saver.batch()`` when there are several);
        the first error is kept and the calls after it are skipped."""
        if self.error is not None:
            return
        try:
            if len(calls) > 1 and self.holds:
                self.batched(self.saver, calls)
            else:
                for name, args in calls:
                    getattr(self.saver, name)(*args)
        except BaseException as exc:
            self.error = exc

    def perform(self, effect: fx.Put | fx.PutWrites, blocking: bool, hold: bool = False) -> Any:
        """Make the saver call of ``effect`` (``put``, or ``put_writes``: without the
        task path for a saver that takes none) with the run's fencing token: now when
        ``blocking`` (after the queued calls, with the held call in one transaction),
        else on the background thread. ``hold`` (a blocking ``put_writes`` of a step's
        last task) keeps the call for the next blocking one, when the saver batches."""
        config = effect.config if self.token is None else fenced(effect.config, self.token)
        name, args = fx.saver_call(effect, config, self.path_ok)
        if blocking:
            self.flush(release=False)
            held = self.held
            if held is None:
                if hold and self.holds and name == "put_writes":
                    self.held = (name, args)
                    return None
                return getattr(self.saver, name)(*args)
            self.held = None
            return self.batched(self.saver, (held, (name, args)))
        self.release()
        if self.thread is None:
            self.pid = os.getpid()
            self.queue = queue.SimpleQueue()
            self.thread = threading.Thread(target=self._work, name="stategraph-saver", daemon=True)
            self.thread.start()
        assert self.queue is not None
        with self.cond:
            self.pending += 1
        self.queue.put((name, args))
        return None

    def perform_now(self, effect: Any) -> Any:
        """Perform a saver effect of the loop's way out of a failed step, waiting for
        it: what the loop is sent back (the tuple a ``GetTuple`` reads, else ``None``)."""
        match effect:
            case fx.GetTuple(config=config):
                self.release()
                return self.saver.get_tuple(config)
            case fx.Put() | fx.PutWrites():
                self.perform(effect, True)
            case fx.Flush():
                self.flush()
        return None

    def _forked(self) -> bool:
        """Whether this is a copy in a forked child: the worker thread, and the calls
        queued for it, belong to the parent process (which performs them); the copy
        must neither wait for them nor touch a lock the parent's thread may hold."""
        if self.thread is not None and os.getpid() != self.pid:
            self.thread = None
            self.queue = None
            return True
        return False

    def release(self) -> None:
        """Make the held call now, alone (before any other use of the saver)."""
        held = self.held
        if held is not None:
            self.held = None
            getattr(self.saver, held[0])(*held[1])

    def flush(self, release: bool = True) -> None:
        """Wait for the queued calls (raising the error of a failed one), then make
        the held call unless ``release`` is false."""
        if self._forked():
            return
        if self.thread is not None:
            with self.cond:
                while self.pending:
                    self.cond.wait()
        if self.error is not None:
            error, self.error = self.error, None
            raise error
        if release:
            self.release()

    def close(self) -> None:
        if self._forked():
            return
        if self.held is not None and getattr(_ON_SAVER_THREAD, "active", False):
            # finalized on a saver thread (see below): no saver call is made there; the
            # held writes are lost as if the run had died before saving them (their
            # task runs again on resume)
            self.held = None
        if self.thread is not None and getattr(_ON_SAVER_THREAD, "active", False):
            # finalized on a saver thread (by the garbage collector, while that thread
            # may hold a saver's lock): it must not wait, neither for itself nor for
            # another saver thread that may need that lock; this one stops once the
            # calls queued before this are done
            assert self.queue is not None
            self.queue.put(None)
            self.thread = None
            return
        try:
            self.flush()
        finally:
            if self.thread is not None and self.queue is not None:
                self.queue.put(None)
                self.thread.join()
                self.thread = None


def drive_sync(loop: Loop, chunks: queue.SimpleQueue[Any] | None) -> Generator[Any, None, Any]:
    """Drive ``loop`` to the end, yielding stream chunks from ``chunks`` as they come.

    The generator's return value (``StopIteration.value``) is the loop's output.
    """
    run = loop.run
    guard = None
    if run.lease_settings is not None:
        # one writer per thread: take the lease before reading the thread
        guard = run.guard = acquire_sync(loop.saver, run, run.lease_settings)
    try:
        return (yield from _drive_sync(loop, chunks, run.guard))
    finally:
        if guard is not None:
            guard.close(finished=not guard.stopped_run(loop.status))


def _drive_sync(loop: Loop, chunks: queue.SimpleQueue[Any] | None, guard: Any) -> Iterator[Any]:
    loop.run.driven_sync = True
    gen = loop.drive()
    saver = _Saver(loop.saver, guard.token_for(loop.saver) if guard is not None else None)
    pool = StepPool()
    run = loop.run
    # what _runs_alone answers for every one-task step of most runs (decided once)
    alone = (
        run.cache is None and run.sink is None and getattr(loop.graph, "step_timeout", None) is None
    )
    value: Any = None
    watch = None
    if loop.run.observers is not None:
        from stategraph.pregel._watch import RunWatch  # only an observed run reports

        watch = RunWatch(loop)
    try:
        if watch is not None:
            resolve(watch.started())
        effect = gen.send(None)
        while True:
            # (empty() first: the caller is the only consumer, and most steps leave nothing)
            if chunks is not None and not chunks.empty():
                yield from _drain(chunks)
            value = None
            match effect:
                case fx.Execute(tasks=tasks):
                    if watch is not None:
                        resolve(watch.step_started(tasks))
                    try:
                        if len(tasks) == 1 and (alone or _runs_alone(loop, tasks)):
                            _run_alone(loop, tasks[0], saver)
                        else:
                            yield from _execute(loop, tasks, saver, pool, chunks)
                    except (Exception, KeyboardInterrupt) as exc:
                        # interrupted from outside (or a step timed out): let the loop
                        # save what it must (durability="exit" saves now), then re-raise
                        _unwind(gen, exc, saver)
                    if watch is not None:
                        resolve(watch.step_finished())
                case fx.Put():
                    saver.perform(effect, effect.blocking)
                    if watch is not None:
                        resolve(watch.checkpoint(effect))
                case fx.PutWrites():
                    saver.perform(effect, effect.blocking)
                case fx.GetTuple(config=config):
                    saver.release()
                    value = loop.saver.get_tuple(config)
                case fx.DeltaHistory(config=config, channels=channels):
                    saver.release()
                    value = loop.saver.get_delta_channel_history(config=config, channels=channels)
                case fx.GetBefore():
                    saver.release()
                    value = fx.get_before(loop.saver, effect)
                case fx.Flush():
                    saver.flush()
            effect = gen.send(value)
    except StopIteration as stop:
        if chunks is not None:
            yield from _drain(chunks)
        if watch is not None:
            resolve(watch.finished(stop.value))
        return stop.value
    except GraphInterrupt as exc:
        if chunks is not None:
            yield from _drain(chunks)
        if watch is not None:
            resolve(watch.interrupted(exc))
        raise
    except BaseException as exc:
        # chunks produced before the run stopped (the failed task's result) still
        # reach the caller, then the exception
        if chunks is not None and not isinstance(exc, GeneratorExit):
            yield from _drain(chunks)
        if watch is not None:
            resolve(watch.failed(exc))
        raise
    finally:
        try:
            saver.close()
        finally:
            # running siblings finish before the run ends (unless the garbage
            # collector closes the run: see step_pool)
            pool.close()


def _unwind(gen: Any, exc: BaseException, saver: _Saver) -> None:
    """Throw ``exc`` into the loop and perform the saver effects of its way out."""
    try:
        effect = gen.throw(exc)
        while True:
            effect = gen.send(saver.perform_now(effect))
    except StopIteration:
        raise exc from None


def _drain(chunks: queue.SimpleQueue[Any]) -> Iterator[Any]:
    while not chunks.empty():
        item = chunks.get_nowait()
        if type(item) is not _Job:
            yield item


def _finish(loop: Loop, task: Task, saver: _Saver, last: bool) -> list[Task]:
    """Record a finished task; returns the tasks it starts in the same step (handlers).

    ``last``: no other task of the step is running or waiting, so its writes may be
    held for the step's checkpoint (see :class:`_Saver`)."""
    spawned: list[Task] = []
    for eff in loop.task_finished(task):
        if isinstance(eff, fx.Spawn):
            spawned.append(eff.task)
        else:
            saver.perform(eff, eff.blocking, last)
    return spawned


def _streams_while_running(loop: Loop, task: Task) -> bool:
    """Whether ``task`` may emit stream chunks while it runs (custom or messages chunks,
    chunks of a subgraph streamed with ``subgraphs=True``, ``@task`` updates), so it
    must run off the caller's thread for them to reach the caller as they come."""
    run = loop.run
    if run.sink is None or not run.modes:
        return False
    modes = run.modes
    if not _LIVE_MODES.isdisjoint(modes):
        return True
    if run.subgraphs and task.node.subgraphs:
        return True
    return "updates" in modes and bool(getattr(task.node.proc, "streams_calls", False))


def _runs_alone(loop: Loop, tasks: list[Task]) -> bool:
    """Whether the step is one task to run inline on the caller's thread, no cache to
    ask: the shell then calls :func:`_run_alone` directly (no generator for the step)."""
    return (
        len(tasks) == 1
        and loop.run.cache is None
        and _alone_inline(loop, tasks[0], getattr(loop.graph, "step_timeout", None))
    )


def _alone_inline(loop: Loop, task: Task, step_timeout: float | None) -> bool:
    """Whether ``task``, alone in its step, runs inline on the caller's thread: no step
    timeout to keep (a thread cannot be stopped) and no chunk it streams while it runs."""
    return step_timeout is None and (
        loop.run.sink is None or not _streams_while_running(loop, task)
    )


def _run_alone(loop: Loop, task: Task, saver: _Saver) -> None:
    """Run ``task`` and the error handlers its failure starts, one after the other, on
    the caller's thread.

    Each runs in a copy of the caller's context, as on a worker thread: what the node
    (or its router) sets in a context variable stays inside it, as in LangGraph.
    """
    inline = [task]
    while inline:
        task = inline.pop(0)
        contextvars.copy_context().run(run_task_sync, task, loop)
        inline.extend(_finish(loop, task, saver, True))


def _execute(
    loop: Loop,
    tasks: list[Task],
    saver: _Saver,
    pool: StepPool,
    chunks: queue.SimpleQueue[Any] | None,
) -> Iterator[Any]:
    cache = loop.run.cache
    if cache is not None:
        keys = cache_lookup_keys(tasks)
        if keys:
            hits = cache.get(list(keys))
            for task in apply_cache_hits(tasks, keys, hits):
                _finish(loop, task, saver, False)
            tasks = [t for t in tasks if not t.done]
    step_timeout = getattr(loop.graph, "step_timeout", None)
    if len(tasks) == 1 and _alone_inline(loop, tasks[0], step_timeout):
        _run_alone(loop, tasks[0], saver)
    elif tasks:
        yield from _run_parallel(loop, tasks, saver, pool, chunks, step_timeout)
    if cache is not None:
        entries = cache_entries(tasks)
        if entries:
            cache.set(entries)


def _run_parallel(
    loop: Loop,
    tasks: list[Task],
    saver: _Saver,
    pool: StepPool,
    chunks: queue.SimpleQueue[Any] | None,
    step_timeout: float | None,
) -> Iterator[Any]:
    """Run a step's several tasks on the run's crew (the caller runs one of them itself
    when nothing it owes needs it free), yielding chunks until every task has ended."""
    run = loop.run
    # threads waiting on remote tasks cost no CPU: let more tasks be in flight
    cap = 32 if run.remote is None else 256
    pool.get(run.max_concurrency or min(cap, max(4, len(tasks))))
    done_q: queue.SimpleQueue[Any] = chunks if chunks is not None else queue.SimpleQueue()
    running: set[_Job] = set()
    failed = False
    pending_tasks = list(tasks)
    limit = run.max_concurrency or len(tasks)

    def submit(task: Task) -> None:
        job = _Job(task, loop, done_q)
        running.add(job)
        pool.submit(job)

    def finished(task: Task) -> None:
        nonlocal failed
        # the step's last task (nothing in flight or waiting): its writes may be held
        # to be saved with the step's checkpoint
        spawned = _finish(loop, task, saver, not running and not pending_tasks)
        if spawned:
            # error handlers start at once, ahead of tasks still waiting for a slot
            pending_tasks[:0] = spawned
        elif task.error is not None and not isinstance(task.error, GraphBubbleUp):
            failed = True
        while pending_tasks and not failed and len(running) < limit:
            submit(pending_tasks.pop(0))

    own = pending_tasks.pop(0) if _caller_takes_one(loop, tasks, step_timeout, limit) else None
    while pending_tasks and len(running) < limit:
        submit(pending_tasks.pop(0))
    if own is not None:
        # the others are on their way to the crew: run this one here, as alone
        contextvars.copy_context().run(run_task_sync, own, loop)
        finished(own)
    deadline = time.monotonic() + step_timeout if step_timeout else None
    wait = _PROBE
    while running:
        try:
            if deadline is not None:
                wait = min(_PROBE, max(0.0, deadline - time.monotonic()))
            item = done_q.get(timeout=wait)
        except queue.Empty:
            if deadline is not None and time.monotonic() >= deadline:
                # threads cannot be stopped: leave them, do not wait for them
                pool.abandon()
                names = ", ".join(sorted(job.task.name for job in running))
                raise TimeoutError(
                    f"Step {loop.step} did not finish within step_timeout={step_timeout}s "
                    f"(still running: {names})."
                ) from None
            if not pool.serving():
                pool.abandon()
                raise _lost_tasks_error(loop, running) from None
            continue
        if type(item) is not _Job:
            yield item
            continue
        if item not in running:
            continue  # (a note of a step given up on before)
        running.remove(item)
        pool.ended()
        task = item.task
        if item.error is not None:
            record_failure(task, item.error)
        finished(task)


def _caller_takes_one(
    loop: Loop, tasks: list[Task], step_timeout: float | None, limit: int
) -> bool:
    """Whether the caller's thread runs the first of a step's several tasks itself
    (instead of handing it to the pool and waiting idle).

    Only when that changes nothing the caller owes: every task is in flight at once
    (no task waits for a slot the caller would only free after its own task), no step
    timeout is set (a thread cannot be stopped, the caller must stay free to give up),
    and no chunk is due before the step ends (the caller must be free to yield the
    update of a task that ends first, or a chunk a task sends while it runs).
    """
    if step_timeout is not None or limit < len(tasks):
        return False
    run = loop.run
    if run.sink is None or not run.modes:
        return True
    return run.modes <= _STEP_END_MODES and not any(_streams_while_running(loop, t) for t in tasks)


def _lost_tasks_error(loop: Loop, running: set[_Job]) -> RuntimeError:
    """The error for tasks handed to the run's crew that no thread will finish."""
    names = ", ".join(sorted(f"'{job.task.name}' (task {job.task.id})" for job in running))
    return RuntimeError(
        f"Run {loop.run.run_id}: step {loop.step}: the task(s) {names} were handed to "
        "the run's worker threads, which stopped before finishing them (a thread died, "
        "the process forked, or the interpreter is exiting). The run stopped instead of "
        "waiting for ever; its last checkpoint is intact: resume it."
    )
