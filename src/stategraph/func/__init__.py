"""The functional API: ``@entrypoint`` workflows made of ``@task`` calls.

An ``@entrypoint`` turns a function into a runnable graph (a :class:`Pregel` with one
node). Inside it, functions decorated with ``@task`` return futures; their results are
saved with the entrypoint's task, so when the workflow is resumed after an
``interrupt()`` (or re-run after a failure) completed tasks are not executed again.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable, Generator
from typing import Any, Generic, TypeVar

from stategraph._context import CURRENT_TASK, TaskContext
from stategraph.channels.ephemeral_value import EphemeralValue
from stategraph.channels.last_value import LastValue
from stategraph.constants import CALL_RESULT, END, START
from stategraph.pregel.call import is_async_callable
from stategraph.pregel.main import Pregel
from stategraph.pregel.node import PregelNode
from stategraph.pregel.retry import retry_delay
from stategraph.types import RetryPolicy

__all__ = ["entrypoint", "task", "TaskFuture"]

R = TypeVar("R")
S = TypeVar("S")

PREVIOUS = "__previous__"
"""Channel holding the value an entrypoint saved on its previous run of the thread."""

_INJECTABLE = ("config", "previous", "runtime", "writer", "store")


class TaskFuture(Generic[R]):
    """The pending result of a ``@task`` call: ``.result()`` in sync code, ``await`` in async."""

    __slots__ = ("_future", "_has_value", "_value")

    def __init__(self, future: Any = None, *, value: Any = None, has_value: bool = False) -> None:
        self._future = future
        self._value = value
        self._has_value = has_value

    def done(self) -> bool:
        """Whether the result is available."""
        return self._has_value or bool(self._future is not None and self._future.done())

    def result(self, timeout: float | None = None) -> R:
        """Block until the task finished and return its result (or raise its error)."""
        if self._has_value:
            return self._value
        fut = self._future
        if hasattr(fut, "get_loop"):
            if not fut.done():
                raise RuntimeError(
                    "This task runs on the event loop: use `await future` instead of "
                    "`future.result()` inside an async entrypoint."
                )
            return fut.result()
        return fut.result(timeout)

    def __await__(self) -> Generator[Any, None, R]:
        if self._has_value:
            return self._value
        fut = self._future
        if not hasattr(fut, "get_loop"):
            import asyncio

            fut = asyncio.wrap_future(fut)
        return (yield from fut.__await__())


_POOL: Any = None


def _pool() -> Any:
    global _POOL
    if _POOL is None:
        from concurrent.futures import ThreadPoolExecutor

        _POOL = ThreadPoolExecutor(max_workers=32, thread_name_prefix="stategraph-task")
    return _POOL


class _TaskFunction(Generic[R]):
    """A function decorated with ``@task``; calling it schedules it and returns a future."""

    def __init__(
        self, func: Callable[..., Any], name: str, retry_policy: tuple[RetryPolicy, ...]
    ) -> None:
        self.func = func
        self.name = name
        self.retry_policy = retry_policy
        self.is_async = is_async_callable(func)
        functools.update_wrapper(self, func)

    def __repr__(self) -> str:
        return f"<task {self.name}>"

    def _run_sync(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        import time

        failures = 0
        while True:
            try:
                return self.func(*args, **kwargs)
            except Exception as exc:
                failures += 1
                delay = retry_delay(self.retry_policy, exc, failures, self.name)
                if delay is None:
                    raise
                time.sleep(delay)

    async def _run_async(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        import asyncio

        failures = 0
        while True:
            try:
                return await self.func(*args, **kwargs)
            except Exception as exc:
                failures += 1
                delay = retry_delay(self.retry_policy, exc, failures, self.name)
                if delay is None:
                    raise
                await asyncio.sleep(delay)

    def __call__(self, *args: Any, **kwargs: Any) -> TaskFuture[R]:
        ctx = CURRENT_TASK.get()
        if ctx is None or ctx.scratchpad is None:
            raise RuntimeError(
                f"Task '{self.name}' was called outside a running graph. Call @task functions "
                "from an @entrypoint function or a StateGraph node."
            )
        pad = ctx.scratchpad
        call_id = pad.next_call_id(ctx.task_id, self.name)
        if call_id in pad.calls:
            # finished in an earlier attempt of this task: do not run it again
            return TaskFuture(value=pad.calls[call_id], has_value=True)

        run_ctx = ctx.run[0] if isinstance(ctx.run, tuple) else None

        def record(value: Any) -> None:
            pad.calls[call_id] = value
            ctx.send([(CALL_RESULT, (call_id, value))])
            if run_ctx is not None:
                run_ctx.emit("updates", {self.name: value})

        import contextvars

        cvars = contextvars.copy_context()
        if self.is_async:
            import asyncio

            async def run() -> Any:
                value = await self._run_async(args, kwargs)
                record(value)
                return value

            return TaskFuture(asyncio.ensure_future(run(), loop=asyncio.get_running_loop()))

        def run_sync() -> Any:
            value = self._run_sync(args, kwargs)
            record(value)
            return value

        return TaskFuture(_pool().submit(cvars.run, run_sync))


def task(
    func: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    retry_policy: RetryPolicy | tuple[RetryPolicy, ...] | None = None,
) -> Any:
    """Decorate a function as a task of the functional API.

    Calling the task inside an ``@entrypoint`` (or a StateGraph node) starts it and
    returns a :class:`TaskFuture`. Its result is saved with the calling task, so a
    resumed workflow gets the saved result instead of running the task again.
    """
    policies: tuple[RetryPolicy, ...]
    if retry_policy is None:
        policies = ()
    elif isinstance(retry_policy, RetryPolicy):
        policies = (retry_policy,)
    else:
        policies = tuple(retry_policy)

    def decorate(f: Callable[..., Any]) -> _TaskFunction[Any]:
        return _TaskFunction(f, name or str(getattr(f, "__name__", "task")), policies)

    if func is not None:
        return decorate(func)
    return decorate


class _EntrypointCall:
    """Calls the entrypoint function with its input and the arguments it asks for."""

    def __init__(self, func: Callable[..., Any], name: str) -> None:
        self.func = func
        self.name = name
        self.is_async = is_async_callable(func)
        try:
            params = inspect.signature(func).parameters
        except (TypeError, ValueError):
            params = {}  # type: ignore[assignment]
        self.inject = tuple(n for n in params if n in _INJECTABLE)
        positional = [
            p
            for p in params.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name not in _INJECTABLE
        ]
        if len(positional) != 1:
            raise ValueError(
                f"@entrypoint function '{name}' must take exactly one positional input "
                f"parameter (plus optional {', '.join(_INJECTABLE)} keywords); it takes "
                f"{len(positional)}."
            )

    def _kwargs(self, values: dict[str, Any], ctx: TaskContext) -> dict[str, Any]:
        previous = values.get(PREVIOUS)
        kwargs: dict[str, Any] = {}
        for n in self.inject:
            if n == "previous":
                kwargs[n] = previous
            elif n == "config":
                kwargs[n] = ctx.config
            elif n == "runtime":
                kwargs[n] = ctx.runtime.override(previous=previous)
            elif n == "writer":
                kwargs[n] = ctx.stream_writer
            elif n == "store":
                kwargs[n] = ctx.runtime.store
        return kwargs

    def __call__(self, values: dict[str, Any], ctx: TaskContext) -> Any:
        return self.func(values.get(START), **self._kwargs(values, ctx))


@dataclasses.dataclass
class _Final(Generic[R, S]):
    value: R
    save: S


class _EntrypointWriter:
    def __call__(self, task: Any, output: Any) -> None:
        if isinstance(output, _Final):
            task.writes.extend([(END, output.value), (PREVIOUS, output.save)])
        else:
            task.writes.extend([(END, output), (PREVIOUS, output)])


class entrypoint:
    """Decorator turning a function into a workflow graph.

    Example::

        @entrypoint(checkpointer=InMemorySaver())
        def workflow(topic: str, *, previous=None) -> dict:
            essay = write_essay(topic).result()
            approved = interrupt({"essay": essay})
            return {"essay": essay, "approved": approved}

    The function takes one input and may ask for ``previous`` (what it returned, or
    saved with ``entrypoint.final``, on the previous run of the thread), ``config``,
    ``runtime``, ``writer`` and ``store``. It returns the workflow's output.
    """

    final = _Final

    def __init__(
        self,
        checkpointer: Any = None,
        store: Any = None,
        cache: Any = None,
        context_schema: type[Any] | None = None,
        retry_policy: RetryPolicy | tuple[RetryPolicy, ...] | None = None,
    ) -> None:
        self.checkpointer = checkpointer
        self.store = store
        self.cache = cache
        self.context_schema = context_schema
        self.retry_policy = retry_policy

    def __call__(self, func: Callable[..., Any]) -> Pregel:
        """Build the workflow graph around ``func``."""
        name = getattr(func, "__name__", "entrypoint")
        node = PregelNode(
            channels=[START, PREVIOUS],
            triggers=[START],
            proc=_EntrypointCall(func, name),
            writers=[_EntrypointWriter()],
            retry_policy=self.retry_policy,
            name=name,
        )
        graph = Pregel(
            nodes={name: node},
            channels={
                START: EphemeralValue(Any),
                END: LastValue(Any),
                PREVIOUS: LastValue(Any),
            },
            input_channels=START,
            output_channels=END,
            stream_channels=END,
            stream_mode="updates",
            checkpointer=self.checkpointer,
            store=self.store,
            cache=self.cache,
            context_schema=self.context_schema,
            name=name,
        )
        functools.update_wrapper(graph, func, updated=())  # type: ignore[arg-type]
        return graph
